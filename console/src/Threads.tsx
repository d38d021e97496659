// Threads: search by status and metadata, paged; one thread's state and its history as a timeline of
// checkpoints, each with what its step's nodes wrote.
import { useState } from "react";
import type { Client, ThreadStatus } from "@langchain/langgraph-sdk";
import { errorText, useLoad } from "./load.ts";
import { href } from "./route.ts";

const PAGE = 20;
const STATUSES = ["", "idle", "busy", "interrupted", "error"] as const;

export function ThreadList({ client, selected }: { client: Client; selected?: string }) {
  const [status, setStatus] = useState<(typeof STATUSES)[number]>("");
  const [metadataText, setMetadataText] = useState("");
  const [offset, setOffset] = useState(0);
  let metadata: Record<string, unknown> | undefined;
  let metadataError: string | undefined;
  try {
    metadata = metadataText.trim() ? JSON.parse(metadataText) : undefined;
  } catch {
    metadataError = "metadata: not JSON";
  }
  const key = JSON.stringify([status, metadata ?? null, offset]);
  const { data, error } = useLoad(
    () =>
      metadataError
        ? Promise.resolve([])
        : client.threads.search({
            status: status ? (status as ThreadStatus) : undefined,
            metadata,
            limit: PAGE,
            offset,
          }),
    [client, key],
  );
  return (
    <div className="list">
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status{" "}
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.target.value as (typeof STATUSES)[number]);
              setOffset(0);
            }}
          >
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s || "any"}
              </option>
            ))}
          </select>
        </label>
        <label>
          Metadata{" "}
          <input
            value={metadataText}
            placeholder='{"graph_id": "chat"}'
            onChange={(e) => {
              setMetadataText(e.target.value);
              setOffset(0);
            }}
          />
        </label>
        {metadataError && <span className="error">{metadataError}</span>}
      </form>
      {error ? <p className="error">{errorText(error)}</p> : null}
      {!data && !error ? <p className="muted">Loading threads…</p> : null}
      <nav aria-label="threads">
        {(data ?? []).map((t) => (
          <a
            key={t.thread_id}
            href={href({ page: "threads", id: t.thread_id })}
            aria-current={t.thread_id === selected ? "page" : undefined}
          >
            <code>{t.thread_id.slice(0, 8)}</code> <span className={`status ${t.status}`}>{t.status}</span>
            <span className="muted"> {new Date(t.updated_at).toLocaleString()}</span>
          </a>
        ))}
      </nav>
      <div className="pager">
        <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </button>
        <button disabled={(data?.length ?? 0) < PAGE} onClick={() => setOffset(offset + PAGE)}>
          Next
        </button>
      </div>
    </div>
  );
}

export function ThreadView({ client, id }: { client: Client; id: string }) {
  const thread = useLoad(() => client.threads.get(id), [client, id]);
  const history = useLoad(() => client.threads.getHistory(id, { limit: 50 }), [client, id]);
  if (thread.error) return <p className="error">{errorText(thread.error)}</p>;
  const t = thread.data;
  if (!t) return <p className="muted">Loading…</p>;
  return (
    <section aria-label="thread">
      <h2>
        Thread <code>{t.thread_id}</code> <span className={`status ${t.status}`}>{t.status}</span>
      </h2>
      <h3>Values</h3>
      <pre>{JSON.stringify(t.values, null, 2)}</pre>
      <h3>History</h3>
      {history.error ? <p className="error">{errorText(history.error)}</p> : null}
      <ol className="timeline" aria-label="history">
        {(history.data ?? []).map((s) => {
          const meta = (s.metadata ?? {}) as { step?: number; source?: string; writes?: unknown };
          return (
            <li key={s.checkpoint.checkpoint_id} data-testid="checkpoint">
              <div>
                step {meta.step ?? "?"} · {meta.source ?? ""} · next [{s.next.join(", ")}]
                <span className="muted"> {s.created_at ? new Date(s.created_at).toLocaleString() : ""}</span>
              </div>
              {meta.writes ? <pre>{JSON.stringify(meta.writes, null, 2)}</pre> : null}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
