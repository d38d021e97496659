// Request validation with zod, reported the way FastAPI (pydantic v2) reports it: each zod issue becomes a
// ValidationItem with pydantic's error type and message and a `loc` that starts with path/query/body/header.
import type { FastifySchemaCompiler } from "fastify";
import type { z } from "zod";
import { CpValidationError, type ValidationItem } from "./errors.js";

const PARTS: Record<string, string> = {
  params: "path",
  querystring: "query",
  body: "body",
  headers: "header",
};

type Issue = z.core.$ZodIssue;

const valueAt = (data: unknown, path: PropertyKey[]): unknown => {
  let cur = data;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
};

/** pydantic's "'a', 'b' or 'c'". */
function expectedList(values: readonly unknown[]): string {
  const quoted = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v)));
  return quoted.length <= 1
    ? (quoted[0] ?? "")
    : `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}

/** The reason pydantic gives for a string that is not a UUID. */
export function uuidReason(s: string): string {
  let text = s;
  let offset = 0;
  if (text.startsWith("urn:uuid:")) {
    text = text.slice(9);
    offset = 9;
  }
  for (let i = 0; i < text.length; i++) {
    if (!/[0-9a-fA-F-]/.test(text[i])) {
      return `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${text[i]}\` at ${i + 1 + offset}`;
    }
  }
  const groups = text.split("-");
  if (groups.length === 1)
    return `invalid length: expected length 32 for simple format, found ${text.length}`;
  if (groups.length !== 5) return `invalid group count: expected 5, found ${groups.length}`;
  const lengths = [8, 4, 4, 4, 12];
  for (let i = 0; i < 5; i++) {
    if (groups[i].length !== lengths[i]) {
      return `invalid group length in group ${i + 1}: expected ${lengths[i]}, found ${groups[i].length}`;
    }
  }
  return "invalid format";
}

function typeItem(expected: string, input: unknown, fromText: boolean): Omit<ValidationItem, "loc"> {
  switch (expected) {
    case "string":
      return { type: "string_type", msg: "Input should be a valid string", input };
    case "int":
    case "number":
      if (typeof input === "string" || fromText) {
        return {
          type: "int_parsing",
          msg: "Input should be a valid integer, unable to parse string as an integer",
          input,
        };
      }
      if (expected === "int" && typeof input === "number") {
        return {
          type: "int_from_float",
          msg: "Input should be a valid integer, got a number with a fractional part",
          input,
        };
      }
      return expected === "int"
        ? { type: "int_type", msg: "Input should be a valid integer", input }
        : { type: "float_type", msg: "Input should be a valid number", input };
    case "boolean":
      return { type: "bool_type", msg: "Input should be a valid boolean", input };
    case "array":
      return { type: "list_type", msg: "Input should be a valid list", input };
    case "object":
    case "record":
      return {
        type: "model_attributes_type",
        msg: "Input should be a valid dictionary or object to extract fields from",
        input,
      };
    default:
      return { type: `${expected}_type`, msg: `Input should be a valid ${expected}`, input };
  }
}

/** One zod issue as pydantic would report it; `data` is the part's raw input (before coercion). */
export function issueToItem(issue: Issue, part: string, data: unknown): ValidationItem[] {
  const path = issue.path as (string | number)[];
  const loc = [part, ...path];
  const input = valueAt(data, path);
  const fromText = part === "query" || part === "path" || part === "header";
  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined) {
        const parent = path.length ? valueAt(data, path.slice(0, -1)) : null;
        return [{ type: "missing", loc, msg: "Field required", input: parent ?? null }];
      }
      const t = typeItem(issue.expected, input, fromText);
      return [{ type: t.type, loc, msg: t.msg, input: t.input }];
    }
    case "invalid_value": {
      const expected = expectedList(issue.values);
      return [{ type: "literal_error", loc, msg: `Input should be ${expected}`, input, ctx: { expected } }];
    }
    case "invalid_format":
      if (issue.format === "guid" || issue.format === "uuid") {
        const error = uuidReason(String(input));
        return [
          { type: "uuid_parsing", loc, msg: `Input should be a valid UUID, ${error}`, input, ctx: { error } },
        ];
      }
      if (issue.format === "datetime") {
        const error = "input is not a valid ISO-8601 date-time";
        return [
          {
            type: "datetime_from_date_parsing",
            loc,
            msg: `Input should be a valid datetime, ${error}`,
            input,
            ctx: { error },
          },
        ];
      }
      return [{ type: "string_pattern_mismatch", loc, msg: issue.message, input }];
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") {
        return [
          {
            type: "string_too_short",
            loc,
            msg: `String should have at least ${min} character${min === 1 ? "" : "s"}`,
            input,
            ctx: { min_length: min },
          },
        ];
      }
      if (issue.origin === "array") {
        const n = Array.isArray(input) ? input.length : 0;
        return [
          {
            type: "too_short",
            loc,
            msg: `List should have at least ${min} item${min === 1 ? "" : "s"} after validation, not ${n}`,
            input,
            ctx: { field_type: "List", min_length: min, actual_length: n },
          },
        ];
      }
      return issue.inclusive === false
        ? [{ type: "greater_than", loc, msg: `Input should be greater than ${min}`, input, ctx: { gt: min } }]
        : [
            {
              type: "greater_than_equal",
              loc,
              msg: `Input should be greater than or equal to ${min}`,
              input,
              ctx: { ge: min },
            },
          ];
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") {
        return [
          {
            type: "string_too_long",
            loc,
            msg: `String should have at most ${max} character${max === 1 ? "" : "s"}`,
            input,
            ctx: { max_length: max },
          },
        ];
      }
      if (issue.origin === "array") {
        const n = Array.isArray(input) ? input.length : 0;
        return [
          {
            type: "too_long",
            loc,
            msg: `List should have at most ${max} item${max === 1 ? "" : "s"} after validation, not ${n}`,
            input,
            ctx: { field_type: "List", max_length: max, actual_length: n },
          },
        ];
      }
      return issue.inclusive === false
        ? [{ type: "less_than", loc, msg: `Input should be less than ${max}`, input, ctx: { lt: max } }]
        : [
            {
              type: "less_than_equal",
              loc,
              msg: `Input should be less than or equal to ${max}`,
              input,
              ctx: { le: max },
            },
          ];
    }
    case "invalid_union":
      // The first alternative's complaints (nullable fields are not unions in zod, so this is rare).
      return (issue.errors[0] ?? []).flatMap((sub) =>
        issueToItem({ ...sub, path: [...path, ...sub.path] } as Issue, part, data),
      );
    case "unrecognized_keys":
      return issue.keys.map((k) => ({
        type: "extra_forbidden",
        loc: [...loc, k],
        msg: "Extra inputs are not permitted",
        input: valueAt(input, [k]),
      }));
    default:
      return [
        {
          type: "value_error",
          loc,
          msg: `Value error, ${issue.message}`,
          input,
          ctx: { error: issue.message },
        },
      ];
  }
}

/** Fastify validator compiler for zod schemas answering CpValidationError (422 HTTPValidationError). */
export const cpValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => {
  const part = PARTS[httpPart ?? "body"] ?? "body";
  return (raw: unknown) => {
    // Fastify gives null for a request without a body: that is no body (missing, or the schema's default).
    const data = part === "body" && raw === null ? undefined : raw;
    const result = schema.safeParse(data);
    if (result.success) return { value: result.data };
    const items = result.error.issues.flatMap((i) => issueToItem(i, part, data));
    return { error: new CpValidationError(items) };
  };
};
