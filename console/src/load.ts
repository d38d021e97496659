// Loading data in a component: the value, the error, and a way to load again.
import { useCallback, useEffect, useState } from "react";

export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data?: T; error?: unknown; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  const [n, setN] = useState(0);
  const run = useCallback(load, deps);
  useEffect(() => {
    let live = true;
    setState({});
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
