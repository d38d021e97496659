// Threads: search by status and metadata, paged, and a new thread; one thread: its state (and the interrupt it
// waits on), a run started and watched (RunPanel), its runs with status and timings, its history as a timeline
// of checkpoints with what each step's nodes wrote, a fork from any checkpoint, and its state edited as a node.
import { useEffect, useRef, useState, type FormEvent } from "react";
import type { Client, Interrupt, ThreadState, ThreadStatus } from "@langchain/langgraph-sdk";
import { ConfirmDelete } from "./forms.tsx";
import { errorText, useLoad } from "./load.ts";
import { href } from "./route.ts";
import { RunPanel, type RunBase } from "./RunPanel.tsx";

const PAGE = 20;
const STATUSES = ["", "idle", "busy", "interrupted", "error"] as const;

/** `tick` changes when a thread changed (a run, a new thread, a state edit): the list loads again. */
export function ThreadList({
  client,
  selected,
  tick,
  onChange,
}: {
  client: Client;
  selected?: string;
  tick: number;
  onChange: () => void;
}) {
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
    [client, key, tick],
    true,
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
      <NewThread client={client} onCreated={onChange} />
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

/** A new thread, opened at once. */
function NewThread({ client, onCreated }: { client: Client; onCreated: () => void }) {
  const [problem, setProblem] = useState<string>();
  const create = async () => {
    try {
      const t = await client.threads.create();
      location.hash = href({ page: "threads", id: t.thread_id });
      onCreated();
    } catch (e) {
      setProblem(errorText(e));
    }
  };
  return (
    <div className="new-thread">
      <button onClick={() => void create()}>New thread</button>
      {problem ? <span className="error"> {problem}</span> : null}
    </div>
  );
}

const duration = (from: string, to: string): string => {
  const ms = new Date(to).getTime() - new Date(from).getTime();
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
};

function RunList({ client, threadId, tick }: { client: Client; threadId: string; tick: number }) {
  const runs = useLoad(() => client.runs.list(threadId, { limit: 20 }), [client, threadId, tick], true);
  // While a run is pending or running (here, or started by another client), its status is read again every
  // 2 s: a run ends (or is cancelled) on the server, also after this page's stream of it has closed.
  const live = runs.data?.some((r) => r.status === "pending" || r.status === "running") ?? false;
  const { reload } = runs;
  useEffect(() => {
    if (!live) return;
    const timer = setTimeout(reload, 2000);
    return () => clearTimeout(timer);
  }, [live, runs.data, reload]);
  if (runs.error) return <p className="error">{errorText(runs.error)}</p>;
  if (!runs.data?.length) return <p className="muted">No runs yet.</p>;
  return (
    <table className="runs" aria-label="runs">
      <thead>
        <tr>
          <th>run</th>
          <th>status</th>
          <th>assistant</th>
          <th>created</th>
          <th>took</th>
        </tr>
      </thead>
      <tbody>
        {runs.data.map((r) => (
          <tr key={r.run_id} data-testid="run-row" data-status={r.status}>
            <td>
              <code>{r.run_id.slice(0, 8)}</code>
            </td>
            <td>
              <span className={`status ${r.status}`}>{r.status}</span>
            </td>
            <td>
              <code>{r.assistant_id.slice(0, 8)}</code>
            </td>
            <td>{new Date(r.created_at).toLocaleTimeString()}</td>
            <td>
              {r.status === "pending" || r.status === "running" ? "…" : duration(r.created_at, r.updated_at)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Edits the thread's state (at a checkpoint, or the latest) as if a node had written it: a new checkpoint. */
function StateEditor({
  client,
  threadId,
  at,
  nodes,
  onSaved,
  onClose,
}: {
  client: Client;
  threadId: string;
  at: { checkpointId?: string; label: string; values: unknown };
  nodes: string[];
  onSaved: () => void;
  onClose: () => void;
}) {
  const [text, setText] = useState(() => JSON.stringify(at.values ?? {}, null, 2));
  const [asNode, setAsNode] = useState("");
  const [problem, setProblem] = useState<string>();
  // Opened from a checkpoint far down the history: it comes into view, its values focused.
  const values = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    values.current?.scrollIntoView({ block: "center" });
    values.current?.focus();
  }, []);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    let values: Record<string, unknown>;
    try {
      values = JSON.parse(text);
    } catch {
      setProblem("values: not JSON");
      return;
    }
    try {
      await client.threads.updateState(threadId, {
        values,
        asNode: asNode || undefined,
        checkpointId: at.checkpointId,
      });
      onSaved();
    } catch (err) {
      setProblem(errorText(err));
    }
  };
  return (
    <form className="state-editor" aria-label="edit state" onSubmit={save}>
      <h3>
        Edit the state at <code>{at.label}</code>
      </h3>
      <label>
        Values (JSON, merged through the graph&apos;s reducers)
        <textarea ref={values} rows={10} value={text} onChange={(e) => setText(e.target.value)} />
      </label>
      <label>
        As node <input list="state-editor-nodes" value={asNode} onChange={(e) => setAsNode(e.target.value)} />
        <datalist id="state-editor-nodes">
          {nodes.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
      </label>
      <div className="actions">
        <button type="submit">Save state</button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {problem ? <p className="error">{problem}</p> : null}
    </form>
  );
}

/** `onChange`: the thread changed (its status, its state), for the list beside it. */
export function ThreadView({ client, id, onChange }: { client: Client; id: string; onChange: () => void }) {
  const [tick, setTick] = useState(0);
  const refresh = () => {
    setTick((t) => t + 1);
    onChange();
  };
  const thread = useLoad(() => client.threads.get(id), [client, id, tick], true);
  // A busy thread (a run here, or one another client started) is read again every 2 s until it is not, and the
  // thread list with it.
  const busy = thread.data?.status === "busy";
  useEffect(() => {
    if (!busy) return;
    const timer = setTimeout(() => {
      setTick((t) => t + 1);
      onChange();
    }, 2000);
    return () => clearTimeout(timer);
  }, [busy, thread.data, onChange]);
  const history = useLoad(() => client.threads.getHistory(id, { limit: 50 }), [client, id, tick], true);
  const [base, setBase] = useState<RunBase>();
  const [editing, setEditing] = useState<{ checkpointId?: string; label: string; values: unknown }>();
  if (thread.error) return <p className="error">{errorText(thread.error)}</p>;
  const t = thread.data;
  if (!t) return <p className="muted">Loading…</p>;
  const interrupts: Interrupt[] = Object.values(t.interrupts ?? {}).flat();
  const meta = (t.metadata ?? {}) as { assistant_id?: string; graph_id?: string };
  const states: ThreadState[] = history.data ?? [];
  const nodes = [
    ...new Set(states.flatMap((s) => Object.keys(((s.metadata ?? {}) as { writes?: object }).writes ?? {}))),
  ].filter((n) => n !== "__start__");
  return (
    <section aria-label="thread">
      <h2>
        Thread <code>{t.thread_id}</code> <span className={`status ${t.status}`}>{t.status}</span>
      </h2>
      <div className="actions">
        <ConfirmDelete
          what="this thread"
          onDelete={async () => {
            await client.threads.delete(id);
            onChange();
            location.hash = href({ page: "threads" });
          }}
        />
      </div>
      <RunPanel
        client={client}
        threadId={id}
        defaultAssistant={meta.assistant_id ?? meta.graph_id}
        interrupts={interrupts}
        base={base}
        onClearBase={() => setBase(undefined)}
        onStart={refresh}
        onEnd={() => {
          setBase(undefined);
          refresh();
        }}
      />
      <h3>Values</h3>
      <pre data-testid="values">{JSON.stringify(t.values, null, 2)}</pre>
      <button onClick={() => setEditing({ label: "the latest checkpoint", values: t.values })}>
        Edit state
      </button>
      {editing ? (
        <StateEditor
          key={editing.checkpointId ?? "latest"}
          client={client}
          threadId={id}
          at={editing}
          nodes={nodes}
          onSaved={() => {
            setEditing(undefined);
            refresh();
          }}
          onClose={() => setEditing(undefined)}
        />
      ) : null}
      <h3>Runs</h3>
      <RunList client={client} threadId={id} tick={tick} />
      <h3>History</h3>
      {history.error ? <p className="error">{errorText(history.error)}</p> : null}
      <ol className="timeline" aria-label="history">
        {states.map((s, i) => {
          const m = (s.metadata ?? {}) as { step?: number; source?: string; writes?: unknown };
          const checkpointId = s.checkpoint.checkpoint_id ?? "";
          const parent = s.parent_checkpoint?.checkpoint_id ?? undefined;
          const label = `step ${m.step ?? "?"} · ${checkpointId.slice(0, 8)}`;
          // Newest first: a checkpoint whose parent is not the one listed after it starts a branch (a fork).
          const older = states[i + 1]?.checkpoint.checkpoint_id;
          const branch = parent !== undefined && older !== undefined && parent !== older;
          const waiting = (s.tasks ?? []).some((t) => (t.interrupts ?? []).length > 0);
          return (
            <li
              key={checkpointId}
              data-testid="checkpoint"
              data-checkpoint={checkpointId}
              data-step={m.step}
              className={branch ? "branch" : undefined}
            >
              <div>
                <strong>step {m.step ?? "?"}</strong> · {m.source ?? ""} · next [{s.next.join(", ")}]
                {waiting ? <span className="status interrupted"> waiting for an answer</span> : null}
                <span className="muted">
                  {" "}
                  <code>{checkpointId.slice(0, 8)}</code>
                  {parent ? (
                    <>
                      {" "}
                      from <code>{parent.slice(0, 8)}</code>
                    </>
                  ) : null}
                  {branch ? " (a branch starts here)" : ""} ·{" "}
                  {s.created_at ? new Date(s.created_at).toLocaleString() : ""}
                </span>
              </div>
              {m.writes ? <pre>{JSON.stringify(m.writes, null, 2)}</pre> : null}
              <div className="actions">
                <button onClick={() => setBase({ checkpointId, label })}>Fork from here</button>
                <button onClick={() => setEditing({ checkpointId, label, values: s.values })}>
                  Edit state here
                </button>
              </div>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
