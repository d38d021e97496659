// Loading data in a component (the value, the error, and a way to load again), and the API calls its forms and
// buttons make (busy while one runs, the text of its failure).
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
  const reload = useCallback(() => setN((x) => x + 1), []);
  return { ...state, reload };
}

/** The text of an API error body's `detail`: a string, or a validation error's items as `field: message`. */
export function detailText(body: unknown): string | undefined {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail))
    return detail
      .map((d: { loc?: unknown[]; msg?: string }) => `${(d.loc ?? []).join(".")}: ${d.msg ?? ""}`)
      .join("; ");
  return undefined;
}

/** An error as a person reads it: an API answer's `detail` with its status, other errors' messages. */
export function errorText(e: unknown): string {
  const { status, text } = (e ?? {}) as { status?: unknown; text?: unknown };
  if (typeof status === "number" && typeof text === "string") {
    try {
      const detail = detailText(JSON.parse(text));
      if (detail !== undefined) return `${detail} (HTTP ${status})`;
    } catch {
      // Not JSON: the message as it is.
    }
  }
  return e instanceof Error ? e.message : String(e);
}

/**
 * An API call a form or a button makes: `busy` while it runs, the text of its failure in `error` (cleared when
 * it runs again). `run` resolves whether it succeeded. `keepBusy`: a success leaves `busy` set, for a call after
 * which the component goes away (a delete, another page), so that it cannot be made twice meanwhile.
 */
export function useAction(): {
  busy: boolean;
  error?: string;
  run: (call: () => Promise<unknown>, opts?: { keepBusy?: boolean }) => Promise<boolean>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const run = async (call: () => Promise<unknown>, opts: { keepBusy?: boolean } = {}) => {
    setBusy(true);
    setError(undefined);
    try {
      await call();
      if (!opts.keepBusy) setBusy(false);
      return true;
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
      return false;
    }
  };
  return { busy, error, run };
}
