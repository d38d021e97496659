// A form built from a JSON schema's top-level properties (a graph's input schema, an assistant's config schema):
// a text field for strings, a number field, a checkbox, a message box for a `messages` channel, JSON for the
// rest. Empty fields are left out of the value; a field whose JSON does not parse is reported by name.
import type { KeyboardEvent } from "react";

export interface ObjectSchema {
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

export interface PropertySchema {
  type?: string | string[];
  langgraph_type?: string;
  description?: string;
  enum?: unknown[];
}

export type FieldKind = "messages" | "string" | "number" | "boolean" | "json";

export type Fields = Record<string, string | boolean>;

export function kindOf(name: string, p: PropertySchema): FieldKind {
  if (p.langgraph_type === "messages" || (name === "messages" && p.type === "array")) return "messages";
  const type = Array.isArray(p.type) ? p.type.find((t) => t !== "null") : p.type;
  if (type === "string") return "string";
  if (type === "number" || type === "integer") return "number";
  if (type === "boolean") return "boolean";
  return "json";
}

/** The form's fields as they start: from a value (an assistant's configurable), or empty. */
export function initialFields(schema: ObjectSchema | undefined, value: Record<string, unknown> = {}): Fields {
  const fields: Fields = {};
  for (const [name, p] of Object.entries(schema?.properties ?? {})) {
    const v = value[name];
    const kind = kindOf(name, p);
    if (kind === "boolean") fields[name] = v === true;
    else if (v === undefined || v === null) fields[name] = "";
    else if (kind === "string" || kind === "number") fields[name] = String(v);
    else if (kind === "json") fields[name] = JSON.stringify(v, null, 2);
    else fields[name] = "";
  }
  return fields;
}

/** The fields with every message box emptied (once its message is sent). */
export function clearMessages(schema: ObjectSchema | undefined, fields: Fields): Fields {
  const out = { ...fields };
  for (const [name, p] of Object.entries(schema?.properties ?? {}))
    if (kindOf(name, p) === "messages") out[name] = "";
  return out;
}

/**
 * The value of the fields: a message box becomes one user message; an empty field is left out, and so is an
 * unticked checkbox unless `keepFalse` (a config: false is a setting; a run's input: it is no input). Throws an
 * Error naming the field when a JSON or number field does not parse.
 */
export function fieldsValue(
  schema: ObjectSchema | undefined,
  fields: Fields,
  keepFalse = false,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(schema?.properties ?? {})) {
    const raw = fields[name];
    const kind = kindOf(name, p);
    if (kind === "boolean") {
      if (raw === true || keepFalse) out[name] = raw === true;
      continue;
    }
    const text = typeof raw === "string" ? raw : "";
    if (!text.trim()) continue;
    if (kind === "messages") out[name] = [{ role: "user", content: text }];
    else if (kind === "string") out[name] = text;
    else if (kind === "number") {
      const n = Number(text);
      if (!Number.isFinite(n)) throw new Error(`${name}: not a number`);
      out[name] = n;
    } else {
      try {
        out[name] = JSON.parse(text);
      } catch {
        throw new Error(`${name}: not JSON`);
      }
    }
  }
  return out;
}

/** Ctrl+Enter (or Cmd+Enter) in a text area submits its form. */
function submitOnCtrlEnter(e: KeyboardEvent<HTMLTextAreaElement>) {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    e.currentTarget.form?.requestSubmit();
  }
}

export function SchemaFields({
  schema,
  fields,
  onChange,
}: {
  schema: ObjectSchema | undefined;
  fields: Fields;
  onChange: (f: Fields) => void;
}) {
  // A message box first: what a chat graph is run with.
  const entries = Object.entries(schema?.properties ?? {}).sort(
    ([a, pa], [b, pb]) => Number(kindOf(b, pb) === "messages") - Number(kindOf(a, pa) === "messages"),
  );
  if (entries.length === 0) return <p className="muted">The schema names no fields.</p>;
  const set = (name: string, v: string | boolean) => onChange({ ...fields, [name]: v });
  return (
    <div className="fields">
      {entries.map(([name, p]) => {
        const kind = kindOf(name, p);
        const v = fields[name];
        const text = typeof v === "string" ? v : "";
        const label =
          kind === "messages" ? `${name} (a user message)` : kind === "json" ? `${name} (JSON)` : name;
        return (
          <label key={name} className={`field ${kind}`}>
            <span>
              {label}
              {schema?.required?.includes(name) ? " *" : ""}
            </span>
            {kind === "boolean" ? (
              <input type="checkbox" checked={v === true} onChange={(e) => set(name, e.target.checked)} />
            ) : kind === "string" && p.enum ? (
              <select value={text} onChange={(e) => set(name, e.target.value)}>
                <option value="">—</option>
                {p.enum.map((o) => (
                  <option key={String(o)} value={String(o)}>
                    {String(o)}
                  </option>
                ))}
              </select>
            ) : kind === "string" || kind === "number" ? (
              <input
                type={kind === "number" ? "number" : "text"}
                value={text}
                onChange={(e) => set(name, e.target.value)}
              />
            ) : (
              <textarea
                rows={kind === "messages" ? 3 : 4}
                value={text}
                onChange={(e) => set(name, e.target.value)}
                onKeyDown={submitOnCtrlEnter}
              />
            )}
            {p.description ? <small className="muted">{p.description}</small> : null}
          </label>
        );
      })}
    </div>
  );
}
