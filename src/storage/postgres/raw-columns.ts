// PostgreSQL's sealed columns read and replaced raw, for sealing them again (encryption/reseal.ts): JSONB in
// Hangar's tables and in checkpoint metadata, bytea in LangGraph's blobs and pending writes.
import type pg from "pg";
import { ident } from "./migrate.js";
import { RECORD_TABLES, type RawColumns, type RawRow, type TableSpec } from "../encryption/reseal.js";

const TABLES: TableSpec[] = [
  ...RECORD_TABLES,
  {
    table: "checkpoints",
    key: ["thread_id", "checkpoint_ns", "checkpoint_id"],
    columns: [
      {
        column: "metadata",
        treatment: "checkpoint-metadata",
        where: { model: "checkpoint", field: "metadata" },
      },
    ],
  },
  {
    table: "checkpoint_blobs",
    key: ["thread_id", "checkpoint_ns", "channel", "version"],
    columns: [{ column: "blob", treatment: "bytes", where: { model: "checkpoint", field: "channel value" } }],
  },
  {
    table: "checkpoint_writes",
    key: ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
    columns: [{ column: "blob", treatment: "bytes", where: { model: "checkpoint", field: "pending write" } }],
  },
];

const isBytes = (t: TableSpec) => t.table === "checkpoint_blobs" || t.table === "checkpoint_writes";

export function postgresRawColumns(pool: pg.Pool, schema: string): RawColumns {
  const rel = (t: TableSpec) => `${ident(schema)}.${ident(t.table)}`;
  return {
    tables: TABLES,
    async scan(table, after, limit, match) {
      const keys = table.key.map(ident).join(", ");
      const cols = table.columns.map((c) => ident(c.column)).join(", ");
      const where: string[] = [];
      const params: unknown[] = [];
      if (after) {
        where.push(`(${keys}) > (${after.map((_, i) => `$${i + 1}`).join(", ")})`);
        params.push(...after);
      }
      if (match) {
        params.push(match.value);
        where.push(`${ident(match.column)}::text = $${params.length}::text`);
      }
      params.push(limit);
      const { rows } = await pool.query(
        `SELECT ${keys}, ${cols} FROM ${rel(table)} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY ${keys} LIMIT $${params.length}`,
        params,
      );
      return rows.map((r: Record<string, unknown>): RawRow => {
        const values: Record<string, unknown> = {};
        for (const c of table.columns) values[c.column] = r[c.column];
        return { key: table.key.map((k) => r[k]), values, stored: values };
      });
    },
    async replace(table, key, column, stored, next) {
      const keyMatch = table.key.map((k, i) => `${ident(k)} = $${i + 3}`).join(" AND ");
      const bytes = isBytes(table);
      const { rowCount } = await pool.query(
        bytes
          ? `UPDATE ${rel(table)} SET ${ident(column)} = $1 WHERE ${ident(column)} = $2 AND ${keyMatch}`
          : `UPDATE ${rel(table)} SET ${ident(column)} = $1::jsonb
             WHERE ${ident(column)} IS NOT DISTINCT FROM $2::jsonb AND ${keyMatch}`,
        [
          bytes ? next : JSON.stringify(next),
          bytes ? stored : stored === null || stored === undefined ? null : JSON.stringify(stored),
          ...key,
        ],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
