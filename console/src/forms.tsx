// Pieces the console's forms share (the store's and the crons' pages): a JSON field's parse, a delete button that
// asks for a confirmation, and a form's problems and outcome.
import { useRef, useState, type KeyboardEvent } from "react";
import { errorText, useAction } from "./load.ts";

/**
 * A form field's JSON: its value, or an error naming the field. Empty text is `undefined` (the field was left
 * out); `object` requires a JSON object.
 */
export function parseJsonField(
  field: string,
  text: string,
  object = false,
): { value?: unknown; error?: string } {
  if (!text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `${field}: not valid JSON (${errorText(e)})` };
  }
  if (object && (typeof value !== "object" || value === null || Array.isArray(value)))
    return { error: `${field}: must be a JSON object ({…})` };
  return { value };
}

/**
 * A button that deletes after a confirmation in place: the first press asks (focus on "Yes, delete"), Escape or
 * "Cancel" steps back.
 */
export function ConfirmDelete({ what, onDelete }: { what: string; onDelete: () => Promise<unknown> }) {
  const [asking, setAsking] = useState(false);
  const { busy, error, run } = useAction();
  const back = useRef<HTMLButtonElement>(null);
  const cancel = () => {
    setAsking(false);
    // Focus back on the button that asked (rendered again on the next frame).
    requestAnimationFrame(() => back.current?.focus());
  };
  if (!asking)
    return (
      <button type="button" ref={back} aria-label={`Delete ${what}`} onClick={() => setAsking(true)}>
        Delete
      </button>
    );
  const confirm = () => run(onDelete, { keepBusy: true });
  return (
    <span
      className="confirm"
      role="group"
      aria-label={`confirm deleting ${what}`}
      onKeyDown={(e: KeyboardEvent) => e.key === "Escape" && cancel()}
    >
      Delete {what}?{" "}
      <button type="button" className="danger" autoFocus disabled={busy} onClick={confirm}>
        Yes, delete
      </button>{" "}
      <button type="button" disabled={busy} onClick={cancel}>
        Cancel
      </button>
      {error && <span className="error"> {error}</span>}
    </span>
  );
}

/**
 * A form's problems (one per field; else the failure of its API call, `error`), announced as an alert, and what it
 * did, as a status.
 */
export function FormMessages({
  errors,
  error,
  status,
}: {
  errors: string[];
  error?: string;
  status?: string;
}) {
  const shown = errors.length ? errors : error ? [error] : [];
  return (
    <>
      {shown.length > 0 && (
        <ul className="error" role="alert">
          {shown.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      )}
      {status && (
        <p role="status" className="ok">
          {status}
        </p>
      )}
    </>
  );
}
