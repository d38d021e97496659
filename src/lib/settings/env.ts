// How an environment variable is declared and read: a name, a doc string, a default and a zod schema of its
// text; a bad value is a SettingsError naming the variable ("HANGAR_X must be a positive integer, got 'x'").
import { z } from "zod";

/** An environment: process.env, or any name → value map (tests, a project's .env merged in). */
export type Env = Readonly<Record<string, string | undefined>>;

/** A variable whose value cannot be used; the message names it and says what it must be. */
export class SettingsError extends Error {
  override name = "SettingsError";
}

export interface EnvVar<T = unknown> {
  name: string;
  /** One sentence for the docs: what it sets. */
  doc: string;
  /** What it takes, for the docs ("positive integer", "`auto`, `on` or `off`"...). */
  type: string;
  /** The default as the docs show it ("" when there is none). */
  shownDefault: string;
  /** A secret is never repeated in a message. */
  secret: boolean;
  /** Other names read for the same setting (the official Agent Server's), for the docs. */
  aliases: readonly string[];
  /** The value in `env`; throws SettingsError when it is malformed. */
  read(env: Env): T;
}

/**
 * Another name of a setting: the official Agent Server's, so its compose files, Helm values and images' settings work
 * unchanged. `map` turns its text into the setting's own (e.g. LOG_JSON `true` into LOG_FORMAT `json`); it throws a
 * SettingsError for a text it cannot take.
 */
export interface Alias {
  name: string;
  map?: (text: string) => string;
}

interface VarOptions {
  doc: string;
  type: string;
  secret?: boolean;
  /** An empty value counts as set (e.g. an empty prefix); by default empty is the same as unset. */
  keepEmpty?: boolean;
  /** Shown in the docs instead of the default value. */
  shownDefault?: string;
  /** Other names of the setting; two names set to different values are refused, naming both. */
  aliases?: readonly Alias[];
}

/** Declares a variable read with `schema` (from its text), `dflt` when unset. */
export function envVar<S extends z.ZodType<unknown, string>>(
  name: string,
  schema: S,
  opts: VarOptions & { default: NoInfer<z.output<S>> },
): EnvVar<z.output<S>>;
export function envVar<S extends z.ZodType<unknown, string>>(
  name: string,
  schema: S,
  opts: VarOptions,
): EnvVar<z.output<S> | undefined>;
export function envVar(
  name: string,
  schema: z.ZodType<unknown, string>,
  opts: VarOptions & { default?: unknown },
): EnvVar<unknown> {
  const hasDefault = "default" in opts;
  return {
    name,
    doc: opts.doc,
    type: opts.type,
    shownDefault: opts.shownDefault ?? (hasDefault ? String(opts.default) : ""),
    secret: opts.secret ?? false,
    aliases: (opts.aliases ?? []).map((a) => a.name),
    read(env) {
      const given = (n: string) => {
        const raw = env[n];
        return opts.keepEmpty ? raw : raw?.trim() ? raw : undefined;
      };
      // The names set, each with its text as this setting's own.
      const set: { name: string; raw: string; text: string }[] = [];
      const own = given(name);
      if (own !== undefined) set.push({ name, raw: own, text: own });
      for (const a of opts.aliases ?? []) {
        const raw = given(a.name);
        if (raw !== undefined) set.push({ name: a.name, raw, text: a.map ? a.map(raw) : raw });
      }
      if (!set.length) return opts.default;
      const differing = set.filter((e) => e.text.trim() !== set[0].text.trim());
      if (differing.length) {
        const names = [set[0], ...differing].map((e) => e.name).join(" and ");
        throw new SettingsError(`${names} name the same setting and are set differently: set one of them`);
      }
      const { name: used, raw, text } = set[0];
      const parsed = schema.safeParse(text);
      if (parsed.success) return parsed.data;
      const why = parsed.error.issues[0]?.message ?? "is malformed";
      throw new SettingsError(`${used} ${why}${opts.secret ? "" : `, got '${raw}'`}`);
    },
  };
}

/** The values of a group of variables, by key. */
export type ValuesOf<S extends Record<string, EnvVar<any>>> = {
  [K in keyof S]: S[K] extends EnvVar<infer T> ? T : never;
};

/** Reads every variable of a group; one SettingsError lists all the bad ones. */
export function readGroup<S extends Record<string, EnvVar<any>>>(vars: S, env: Env): ValuesOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, v] of Object.entries(vars)) {
    try {
      out[key] = v.read(env);
    } catch (e) {
      if (!(e instanceof SettingsError)) throw e;
      problems.push(e.message);
    }
  }
  if (problems.length) throw new SettingsError(problems.join("; "));
  return out as ValuesOf<S>;
}

// ---- schemas of a variable's text

/** An integer of at least `min` (1: "a positive integer"). */
export const intAtLeast = (min: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, min === 1 ? "must be a positive integer" : `must be an integer of at least ${min}`)
    .transform(Number)
    .refine(
      (n) => n >= min,
      min === 1 ? "must be a positive integer" : `must be an integer of at least ${min}`,
    );

export const positiveInt = intAtLeast(1);

/** A number greater than 0, decimals allowed (`0.5`, `3600`): a duration in seconds, as the official server reads one. */
export const positiveSeconds = z
  .string()
  .trim()
  .regex(/^(\d+(\.\d*)?|\.\d+)$/, "must be a positive number of seconds")
  .transform(Number)
  .refine((n) => n > 0 && Number.isFinite(n), "must be a positive number of seconds");

/** A TCP port, 0 to 65535 (0: any free port). */
export const port = z
  .string()
  .trim()
  .regex(/^\d+$/, "must be a port number (0-65535)")
  .transform(Number)
  .refine((n) => n <= 65535, "must be a port number (0-65535)");

const TRUE = ["1", "true", "yes", "on"];
const FALSE = ["0", "false", "no", "off"];

/** true/false (also 1/0, yes/no, on/off, in any case). */
export const flag = z
  .string()
  .transform((s) => s.trim().toLowerCase())
  .refine((s) => TRUE.includes(s) || FALSE.includes(s), "must be true or false")
  .transform((s) => TRUE.includes(s));

/** One of `values`, in any case (given back as written in `values`). */
export const oneOf = <const V extends string>(values: readonly V[]) =>
  z
    .string()
    .transform((s) => s.trim())
    .refine(
      (s) => values.some((v) => v.toLowerCase() === s.toLowerCase()),
      `must be one of ${values.join(", ")}`,
    )
    .transform((s) => values.find((v) => v.toLowerCase() === s.toLowerCase()) as V);

/** Entries separated by `sep`, trimmed, empty ones dropped. */
export const list = (sep: string) =>
  z.string().transform((s) =>
    s
      .split(sep)
      .map((e) => e.trim())
      .filter(Boolean),
  );

export const text = z.string();
