// Loading data that changes while it is shown: loaded again every `everyMs` as long as `again(data)` says so
// (a revision on its way to DEPLOYED), keeping the previous value on screen meanwhile.
import { useCallback, useEffect, useRef, useState } from "react";

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
    const tick = () => {
      run().then(
        (data) => {
          if (!live) return;
          setState({ data });
          if (againRef.current(data)) timer = setTimeout(tick, everyMs);
        },
        (error: unknown) => live && setState((s) => ({ ...s, error })),
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
