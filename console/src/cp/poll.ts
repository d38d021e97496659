// Loading data that changes while it is shown: loaded again every `everyMs` as long as `again(data)` says so
// (a revision on its way to DEPLOYED), keeping the previous value on screen meanwhile (and through a failed read,
// shown as the error until a read succeeds again).
import { useCallback, useEffect, useRef, useState } from "react";
import { statusOf } from "./api.ts";

export function usePolled<T>(
  load: () => Promise<T>,
  deps: unknown[],
  again: (data: T) => boolean,
  everyMs = 1500,
): { data?: T; error?: unknown; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  const [n, setN] = useState(0);
  const run = useCallback(load, deps);
  const againRef = useRef(again);
  againRef.current = again;
  // A new subject (deps) starts empty; a reload of the same one keeps what is shown.
  useEffect(() => setState({}), [run]);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Whether the last value asked for another look: a failed read then does not end the polling.
    let following = false;
    const tick = () => {
      run().then(
        (data) => {
          if (!live) return;
          setState({ data });
          following = againRef.current(data);
          if (following) timer = setTimeout(tick, everyMs);
        },
        (error: unknown) => {
          if (!live) return;
          setState((s) => ({ ...s, error }));
          // A refusal (4xx: the key, a deleted deployment) ends it; the network or a 5xx may come back.
          const status = statusOf(error);
          if (following && (status === undefined || status >= 500)) timer = setTimeout(tick, everyMs);
        },
      );
    };
    tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [run, n, everyMs]);
  return { ...state, reload: () => setN((x) => x + 1) };
}
