// The embedded database's sealed columns read and replaced raw, for sealing them again (encryption/reseal.ts):
// JSON as text in Hangar's tables, LangGraph's checkpoints and pending writes as blobs (metadata: JSON bytes).
import type Database from "better-sqlite3";
import { RECORD_TABLES, type RawColumns, type RawRow, type TableSpec } from "../encryption/reseal.js";

const TABLES: TableSpec[] = [
  ...RECORD_TABLES,
  {
    table: "checkpoints",
    key: ["thread_id", "checkpoint_ns", "checkpoint_id"],
    columns: [
      { column: "checkpoint", treatment: "bytes", where: { model: "checkpoint", field: "checkpoint" } },
      {
        column: "metadata",
        treatment: "checkpoint-metadata",
        where: { model: "checkpoint", field: "metadata" },
      },
    ],
  },
  {
    table: "writes",
    key: ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
    columns: [
      { column: "value", treatment: "bytes", where: { model: "checkpoint", field: "pending write" } },
    ],
  },
];

const q = (name: string) => `"${name}"`;

/** A stored value as the cipher works on it. */
function decode(table: string, column: string, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  if (table === "checkpoints" && column === "metadata")
    return JSON.parse(Buffer.from(v as Uint8Array).toString("utf8"));
  if (v instanceof Uint8Array) return v;
  return JSON.parse(v as string);
}

function encode(table: string, column: string, v: unknown): unknown {
  if (table === "checkpoints" && column === "metadata") return Buffer.from(JSON.stringify(v), "utf8");
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return JSON.stringify(v);
}

export function sqliteRawColumns(db: Database.Database, begin: () => void): RawColumns {
  return {
    tables: TABLES,
    async scan(table, after, limit, match) {
      const keys = table.key.map(q).join(", ");
      const cols = table.columns.map((c) => q(c.column)).join(", ");
      const where: string[] = [];
      const params: unknown[] = [];
      if (after) {
        where.push(`(${keys}) > (${after.map(() => "?").join(", ")})`);
        params.push(...after);
      }
      if (match) {
        where.push(`${q(match.column)} = ?`);
        params.push(match.value);
      }
      const rows = db
        .prepare(
          `SELECT ${keys}, ${cols} FROM ${q(table.table)} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
           ORDER BY ${keys} LIMIT ?`,
        )
        .all(...params, limit) as Record<string, unknown>[];
      return rows.map((r): RawRow => {
        const values: Record<string, unknown> = {};
        const stored: Record<string, unknown> = {};
        for (const c of table.columns) {
          stored[c.column] = r[c.column];
          values[c.column] = decode(table.table, c.column, r[c.column]);
        }
        return { key: table.key.map((k) => r[k]), values, stored };
      });
    },
    async replace(table, key, column, stored, next) {
      begin();
      const keyMatch = table.key.map((k) => `${q(k)} = ?`).join(" AND ");
      const { changes } = db
        .prepare(`UPDATE ${q(table.table)} SET ${q(column)} = ? WHERE ${keyMatch} AND ${q(column)} IS ?`)
        .run(encode(table.table, column, next), ...key, stored);
      return changes > 0;
    },
  };
}
