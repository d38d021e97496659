// What the control plane's store needs of a database, so its queries (queries.ts) are written once for SQLite
// and PostgreSQL: statements with `?` placeholders, a transaction, where the dialects differ; a builder of parts.
import type { LogLine } from "../domain/types.js";

export type Row = Record<string, any>;

/** The control plane's tables. */
export type Table =
  | "organizations"
  | "workspaces"
  | "api_keys"
  | "deployments"
  | "revisions"
  | "listeners"
  | "uploads"
  | "logs";

/**
 * Runs statements written with `?` placeholders (one per argument, in order; the statements hold no other `?`).
 * Arguments are strings, numbers or null; times are ISO-8601 strings.
 */
export interface SqlExec {
  one(sql: string, args?: unknown[]): Promise<Row | undefined>;
  all(sql: string, args?: unknown[]): Promise<Row[]>;
  /** A statement that returns no rows; resolves to the number of rows it changed. */
  run(sql: string, args?: unknown[]): Promise<number>;
}

/** Where the two databases differ. */
export interface SqlDialect {
  /** A table's name as statements write it (schema-qualified on PostgreSQL). */
  table(name: Table): string;
  /** A JSON column's value as an argument (TEXT on SQLite, JSONB on PostgreSQL) ... */
  toJson(value: unknown): unknown;
  /** ... and back from a row. */
  fromJson(value: unknown): any;
  /** Text as the database can keep it (PostgreSQL's TEXT cannot hold U+0000: it is dropped). */
  text<T extends string | null | undefined>(value: T): T;
  /** A condition: column `column` contains the next argument, case-insensitively. */
  contains(column: string): string;
  /** What a read in a transaction ends with to lock the rows it read ("" where a write transaction is exclusive). */
  forUpdate: string;
  /** The error broke a UNIQUE constraint. */
  isUniqueViolation(e: unknown): boolean;
  /** Appends log lines (messages already redacted) in one write, keeping their order in `seq`. */
  insertLogs(lines: LogLine[]): Promise<void>;
}

/** A database the control plane's store runs on. */
export interface SqlDb extends SqlExec, SqlDialect {
  /** Runs `fn` in a transaction, its statements on `q`; `fn` must have no effect outside the database. */
  tx<T>(fn: (q: SqlExec) => Promise<T>): Promise<T>;
}

/** Parts of a statement (conditions, assignments) with their arguments, in order. */
export class SqlParts {
  readonly parts: string[] = [];
  readonly args: unknown[] = [];

  constructor(private readonly separator: string) {}

  /** Adds a part and the arguments of its `?`s. */
  add(part: string, ...args: unknown[]): this {
    this.parts.push(part);
    this.args.push(...args);
    return this;
  }

  get sql(): string {
    return this.parts.join(this.separator);
  }
}

/** Conditions joined with AND. */
export const where = (first: string, ...args: unknown[]) => new SqlParts(" AND ").add(first, ...args);

/** Assignments of an UPDATE, joined with commas. */
export const assignments = () => new SqlParts(", ");
