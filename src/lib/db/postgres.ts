// Access to PostgreSQL shared by the Agent Server's storage and the control plane's store: a pool opened after
// a probe, statements retried when the server dropped the connection before running them, transactions.
import pg from "pg";
import { statementMayHaveRun, statementNotRun, UnavailableError } from "../errors.js";

export type Row = Record<string, any>;

/** Quotes an identifier (schema name) for SQL. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

export interface Queryable {
  query<R extends pg.QueryResultRow = Row>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * A JSONB parameter (cast with ::jsonb in SQL). PostgreSQL cannot store the character U+0000 in JSONB; it
 * is dropped, as the checkpointer does for checkpoint metadata.
 */
export function jsonb(v: unknown): string {
  const s = JSON.stringify(v);
  return s.includes("\\u0000")
    ? s.replace(/(\\+)u0000/g, (m, bs: string) => (bs.length % 2 ? bs.slice(0, -1) : m))
    : s;
}

/** Whether to try again: always when the statement did not run, also otherwise when running it twice is harmless. */
export const retryable = (e: unknown, idempotent: boolean): boolean =>
  statementNotRun(e) || (idempotent && statementMayHaveRun(e));

const MAX_ATTEMPTS = 3;
const pause = (attempt: number) => new Promise((r) => setTimeout(r, attempt === 1 ? 0 : 100 * attempt));

/** Runs `fn` again (at most twice more) when it failed on a broken connection and `retryable` allows it. */
export async function withRetry<T>(idempotent: boolean, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (attempt >= MAX_ATTEMPTS || !retryable(e, idempotent)) throw e;
      await pause(attempt);
    }
  }
}

/** Refuses a schema name PostgreSQL would not keep as given (the checkpointer quotes it without escaping). */
export function checkSchemaName(schema: string): void {
  // PostgreSQL truncates identifiers at 63 bytes.
  if (!schema || schema.includes('"') || schema.includes("\0") || Buffer.byteLength(schema) > 63) {
    throw new Error(`invalid PostgreSQL schema name "${schema}": 1 to 63 bytes, without double quotes`);
  }
}

/** How long opening waits for the first connection before giving up. */
const CONNECT_TIMEOUT_MS = 15_000;

/** The first connection failed: the message is one line naming the server (never the password). */
export class PostgresConnectError extends UnavailableError {}

/** A one-line reason for a failed first connection, naming the server but never the password. */
function connectError(client: pg.Client, e: unknown): PostgresConnectError {
  const err = e as NodeJS.ErrnoException & { errors?: unknown[] };
  const first = (err.errors?.[0] ?? err) as NodeJS.ErrnoException;
  const network = typeof first.syscall === "string" && typeof first.code === "string";
  const reason = network
    ? `${first.syscall} ${first.code}`
    : err.message || (typeof err.code === "string" ? err.code : String(e));
  const unreachable = network || /timeout/i.test(reason);
  const where = client.host?.startsWith("/") ? client.host : `${client.host}:${client.port}`;
  return new PostgresConnectError(
    `${unreachable ? "cannot reach" : "cannot connect to"} PostgreSQL at ${where}: ${reason.replace(/\s+/g, " ").trim()}`,
  );
}

/**
 * Opens a pool after one probe connection, so an unreachable server fails fast with a PostgresConnectError
 * (the pool itself would wait in its queue). Connections broken while idle are told to `onError` and
 * replaced by the pool.
 */
export async function connectPool(config: pg.PoolConfig, onError: (err: Error) => void): Promise<pg.Pool> {
  const probe = new pg.Client({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  probe.on("error", () => undefined);
  try {
    await probe.connect();
  } catch (e) {
    throw connectError(probe, e);
  } finally {
    await probe.end().catch(() => undefined);
  }
  const pool = new pg.Pool(config);
  // A connection terminated by the server emits "error": on an idle client the pool reports it here and
  // discards the client; on a checked-out one the statement in flight fails (and the client is discarded
  // when released). Unhandled, either would crash the process.
  pool.on("error", (err) => onError(err));
  pool.on("connect", (client) => client.on("error", () => undefined));
  return pool;
}

/** Distinct statement texts named (prepared) per process; later new texts go unnamed. */
const MAX_PREPARED = 400;

/** PostgreSQL's error for a prepared statement whose result columns changed (a table altered since). */
const isStalePlan = (e: unknown): boolean =>
  (e as { code?: string }).code === "0A000" && /cached plan must not change result type/.test(String(e));

/**
 * Makes every connection `pool` opens prepare its parameterised statements (a text with values, the
 * extended protocol already): each is named after its text, so a connection parses and plans it once, and
 * runs it again by name. Planning was over 40% of PostgreSQL's time per run. Statements without values
 * (BEGIN, several statements in one text) go as before. A statement whose result columns changed under it (a
 * table altered by a newer revision's migration) is run again unnamed, and so from then on.
 */
export function prepareStatements(pool: pg.Pool): void {
  const names = new Map<string, string | null>();
  const nameOf = (text: string): string | null => {
    let name = names.get(text);
    if (name === undefined) {
      name = names.size < MAX_PREPARED ? `hangar_${names.size}` : null;
      if (name) names.set(text, name);
    }
    return name;
  };
  type Callback = (err: Error | null, res?: pg.QueryResult) => void;
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<pg.QueryResult> | undefined;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const [text, values, callback] = args;
      const name = typeof text === "string" && Array.isArray(values) ? nameOf(text) : null;
      if (!name) return query(...args);
      const unnamed = () => {
        names.set(text as string, null);
        return query(...args);
      };
      // pg-pool's own query passes a callback; a client checked out is called with promises.
      if (typeof callback === "function") {
        return query({ name, text, values }, (err: Error | null, res?: pg.QueryResult) =>
          err && isStalePlan(err) ? unnamed() : (callback as Callback)(err, res),
        );
      }
      return query({ name, text, values })!.catch((e: unknown) => {
        if (!isStalePlan(e)) throw e;
        return unnamed();
      });
    };
  });
}

/** A pool and the schema its tables live in. */
export class PgDb implements Queryable {
  constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
  ) {}

  /**
   * One statement in its own transaction. A statement the server never ran is retried on another
   * connection (pg's pool discards a broken client); a read is retried also when the connection broke
   * mid-flight.
   */
  query<R extends pg.QueryResultRow = Row>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<R>> {
    return withRetry(/^\s*SELECT\b/i.test(sql), () => this.pool.query<R>(sql, params));
  }

  async rows<R extends pg.QueryResultRow = Row>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.query<R>(sql, params)).rows;
  }

  /**
   * A SELECT of a function that writes (one call, its own transaction): retried only when the server never ran
   * it, as a write is; a connection lost mid-flight leaves unknown whether it committed, and the error is thrown.
   */
  async call<R extends pg.QueryResultRow = Row>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await withRetry(false, () => this.pool.query<R>(sql, params))).rows;
  }

  /**
   * Runs `fn` in a transaction on one client (always released; a broken one is discarded). When the
   * connection was lost before COMMIT the transaction did not happen and is run again, so `fn` must have
   * no effects outside the database.
   */
  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let committing = false;
      try {
        const client = await this.pool.connect();
        try {
          await client.query("BEGIN");
          const out = await fn(client);
          committing = true;
          await client.query("COMMIT");
          client.release();
          return out;
        } catch (e) {
          try {
            await client.query("ROLLBACK");
            client.release();
          } catch {
            client.release(e as Error);
          }
          throw e;
        }
      } catch (e) {
        // Lost before COMMIT: rolled back by the server. Lost during COMMIT: unknown, so not retried.
        const again = !committing && (statementNotRun(e) || statementMayHaveRun(e));
        if (attempt >= MAX_ATTEMPTS || !again) throw e;
        await pause(attempt);
      }
    }
  }
}
