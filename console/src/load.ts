// Loading data in a component: the value, the error, and a way to load again.
import { useCallback, useEffect, useState } from "react";

/**
 * `keep`: what was loaded stays shown while loading again (a page that refreshes itself after a change keeps
 * its place); otherwise it is cleared.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
  keep = false,
): { data?: T; error?: unknown; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  const [n, setN] = useState(0);
  const run = useCallback(load, deps);
  useEffect(() => {
    let live = true;
    if (!keep) setState({});
    run().then(
      (data) => live && setState({ data }),
      (error: unknown) => live && setState({ error }),
    );
    return () => {
      live = false;
    };
  }, [run, n]);
  return { ...state, reload: () => setN((x) => x + 1) };
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
