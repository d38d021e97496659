// Sealing stored values again with the current key: lazily, the rows a read found sealed with an older key (in
// the background, compare-and-swap per value, so a concurrent write always wins), and all at once for
// `hangar encryption reencrypt`, which also seals what was stored before encryption was on. Both work on raw
// columns through a small per-backend interface, the same tables and columns on both backends.
import type { StorageCipher, Where } from "./cipher.js";

/** How a column's value is treated. */
export type Treatment = "content" | "keys" | "checkpoint-metadata" | "bytes";

export interface ColumnSpec {
  column: string;
  treatment: Treatment;
  where: Where;
}

/** A table holding sealed values: its primary key and its sealed columns (names as on both backends). */
export interface TableSpec {
  table: string;
  key: string[];
  columns: ColumnSpec[];
}

const col = (column: string, treatment: Treatment, model: Where["model"]): ColumnSpec => ({
  column,
  treatment,
  where: { model, field: column },
});

/** Every table with sealed values but the checkpointers' (those differ between backends: see `raw.tables`). */
export const RECORD_TABLES: TableSpec[] = [
  {
    table: "assistants",
    key: ["assistant_id"],
    columns: ["config", "context", "metadata"].map((c) => col(c, "keys", "assistant")),
  },
  {
    table: "assistant_versions",
    key: ["assistant_id", "version"],
    columns: ["config", "context", "metadata"].map((c) => col(c, "keys", "assistant")),
  },
  {
    table: "threads",
    key: ["thread_id"],
    columns: [
      col("values", "content", "thread"),
      col("interrupts", "content", "thread"),
      col("error", "content", "thread"),
      col("metadata", "keys", "thread"),
      col("config", "keys", "thread"),
    ],
  },
  {
    table: "runs",
    key: ["run_id"],
    columns: [col("kwargs", "content", "run"), col("metadata", "keys", "run")],
  },
  {
    table: "crons",
    key: ["cron_id"],
    columns: [col("payload", "content", "cron"), col("metadata", "keys", "cron")],
  },
  { table: "store_items", key: ["namespace", "key"], columns: [col("value", "keys", "store")] },
];

/**
 * A row as the backend reads it: its key's values, each sealed column's value (JSON decoded, or bytes), and
 * each as stored (what `replace` compares with).
 */
export interface RawRow {
  key: unknown[];
  values: Record<string, unknown>;
  stored: Record<string, unknown>;
}

/** What a backend offers for sealing again: reading rows in key order, and replacing one value if unchanged. */
export interface RawColumns {
  /** Every table with sealed values on this backend (RECORD_TABLES and the checkpointer's). */
  tables: TableSpec[];
  /** Rows of `table` after `after` (key order), at most `limit`; only those with `match` (column = value) if given. */
  scan(
    table: TableSpec,
    after: unknown[] | null,
    limit: number,
    match?: { column: string; value: unknown },
  ): Promise<RawRow[]>;
  /** Sets the column of the row to `next` if it still holds `stored` (as scan read it); true if it did. */
  replace(table: TableSpec, key: unknown[], column: string, stored: unknown, next: unknown): Promise<boolean>;
}

/** A value as it must be stored now, or undefined when it already is (sealed with the current key). */
export async function resealed(
  cipher: StorageCipher,
  spec: ColumnSpec,
  value: unknown,
): Promise<unknown | undefined> {
  if (value === null || value === undefined) return undefined;
  let stale = false;
  const onStale = () => (stale = true);
  switch (spec.treatment) {
    case "content": {
      const plain = await cipher.openValue(value, spec.where, onStale);
      if (plain !== value && !stale) return undefined;
      return cipher.sealValue(plain, spec.where);
    }
    case "keys": {
      const plain = await cipher.open(value, spec.where, onStale);
      if (stale) return cipher.sealKeys(plain, spec.where);
      // Named keys stored in the clear (before LANGGRAPH_AES_JSON_KEYS named them) are sealed too.
      const sealed = await cipher.sealKeys(value, spec.where);
      return sealed === value ? undefined : sealed;
    }
    case "checkpoint-metadata": {
      const plain = await cipher.openCheckpointMetadata(value, onStale);
      if (plain !== value && !stale) return undefined;
      const next = await cipher.sealCheckpointMetadata(plain as Record<string, unknown>);
      return JSON.stringify(next) === JSON.stringify(value) ? undefined : next;
    }
    case "bytes": {
      const bytes = value as Uint8Array;
      const plain = await cipher.openBytes(bytes, spec.where, onStale);
      if (plain !== bytes && !stale) return undefined;
      return cipher.sealBytes(plain as Uint8Array, spec.where);
    }
  }
}

export interface ResealProgress {
  table: string;
  rows: number;
  changed: number;
}

/**
 * Seals again every value of `table` (or of its rows matching `match`) that is not sealed with the current key.
 * A value changed meanwhile by a write is left (the write sealed it). Returns the rows read and values changed.
 */
export async function resealTable(
  raw: RawColumns,
  cipher: StorageCipher,
  table: TableSpec,
  opts: {
    match?: { column: string; value: unknown };
    batch?: number;
    progress?: (p: ResealProgress) => void;
  } = {},
): Promise<ResealProgress> {
  const p: ResealProgress = { table: table.table, rows: 0, changed: 0 };
  let after: unknown[] | null = null;
  for (;;) {
    const rows = await raw.scan(table, after, opts.batch ?? 500, opts.match);
    if (!rows.length) break;
    for (const row of rows) {
      for (const spec of table.columns) {
        const next = await resealed(cipher, spec, row.values[spec.column]);
        if (next === undefined) continue;
        if (await raw.replace(table, row.key, spec.column, row.stored[spec.column], next)) p.changed++;
      }
    }
    p.rows += rows.length;
    opts.progress?.(p);
    after = rows[rows.length - 1]!.key;
  }
  return p;
}

/** Seals again everything stored (the command `hangar encryption reencrypt`). */
export async function resealAll(
  raw: RawColumns,
  cipher: StorageCipher,
  progress?: (p: ResealProgress) => void,
): Promise<ResealProgress[]> {
  const out: ResealProgress[] = [];
  for (const table of raw.tables) out.push(await resealTable(raw, cipher, table, { progress }));
  return out;
}

/**
 * Seals again, in the background and one at a time, the rows reads found sealed with an older key (each table and
 * match once while queued); a failure is told to `onError` and the value stays readable under its old key.
 */
export class LazyResealer {
  private queued = new Map<string, { table: TableSpec; match: { column: string; value: unknown } }>();
  private running: Promise<void> | undefined;

  constructor(
    private raw: RawColumns,
    private cipher: StorageCipher,
    private onError: (e: Error) => void,
  ) {}

  /** Queues the rows of `table` whose `column` is `value`. */
  request(table: string, column: string, value: unknown): void {
    const spec = this.raw.tables.find((t) => t.table === table);
    if (!spec) return;
    const id = `${table}\0${column}\0${String(value)}`;
    if (this.queued.has(id)) return;
    this.queued.set(id, { table: spec, match: { column, value } });
    this.running ??= this.drain();
  }

  private async drain(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    while (this.queued.size) {
      const [id, job] = this.queued.entries().next().value!;
      try {
        await resealTable(this.raw, this.cipher, job.table, { match: job.match });
      } catch (e) {
        this.onError(e as Error);
      }
      this.queued.delete(id);
    }
    this.running = undefined;
  }

  /** Resolves once what is queued now is done (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }
}
