// Starting a run on a thread and watching it: the assistant, an input form from its graph's input schema (or an
// answer to the thread's interrupt), optionally from an older checkpoint (a fork); the run streams values,
// updates, messages, custom events and subgraphs' events (their namespace in the event's name), the messages'
// tokens joined into text as they arrive; Cancel stops it.
import { useEffect, useRef, useState, type FormEvent } from "react";
import type { Client, Interrupt } from "@langchain/langgraph-sdk";
import { errorText, useLoad } from "./load.ts";
import { fieldsValue, initialFields, SchemaFields, type Fields, type ObjectSchema } from "./SchemaForm.tsx";

type Event = { n: number; event: string; data: unknown };
type Phase = "idle" | "running" | "done" | "cancelled" | "failed";

const MAX_EVENTS = 500;
const MODES = ["values", "updates", "messages-tuple", "custom"] as const;

/** The text of a message chunk's content: a string, or the text blocks of a list. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((b) => (b && typeof b === "object" && "text" in b ? String(b.text) : "")).join("");
  return "";
}

/** A short line for an event's data: a message chunk as its text and node, anything else as JSON. */
function brief(event: string, data: unknown): string {
  if ((event === "messages" || event.startsWith("messages|")) && Array.isArray(data)) {
    const [chunk, meta] = data as [
      { content?: unknown; type?: string },
      { langgraph_node?: string } | undefined,
    ];
    return `${JSON.stringify(textOf(chunk?.content))} · ${chunk?.type ?? "message"}${meta?.langgraph_node ? ` from ${meta.langgraph_node}` : ""}`;
  }
  const s = JSON.stringify(data) ?? "";
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

/** An answer as typed: JSON when it parses, the text otherwise. */
function answerValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface RunBase {
  checkpointId: string;
  label: string;
}

export function RunPanel({
  client,
  threadId,
  defaultAssistant,
  interrupts,
  base,
  onClearBase,
  onEnd,
}: {
  client: Client;
  threadId: string;
  defaultAssistant?: string;
  interrupts: Interrupt[];
  base?: RunBase;
  onClearBase: () => void;
  onEnd: () => void;
}) {
  const assistants = useLoad(() => client.assistants.search({ limit: 100 }), [client]);
  const [assistantId, setAssistantId] = useState<string>("");
  useEffect(() => {
    if (assistantId || !assistants.data?.length) return;
    const known = assistants.data.find(
      (a) => a.assistant_id === defaultAssistant || a.graph_id === defaultAssistant,
    );
    setAssistantId((known ?? assistants.data[0]).assistant_id);
  }, [assistants.data, defaultAssistant, assistantId]);
  const schemas = useLoad(
    () => (assistantId ? client.assistants.getSchemas(assistantId) : Promise.resolve(undefined)),
    [client, assistantId],
  );
  const inputSchema = schemas.data?.input_schema as ObjectSchema | undefined;
  const [fields, setFields] = useState<Fields>({});
  useEffect(() => setFields(initialFields(inputSchema)), [inputSchema]);
  const [answer, setAnswer] = useState("");
  const [problem, setProblem] = useState<string>();
  const [phase, setPhase] = useState<Phase>("idle");
  const [runId, setRunId] = useState<string>();
  const [events, setEvents] = useState<Event[]>([]);
  const [replies, setReplies] = useState<{ id: string; ns: string; text: string }[]>([]);
  const abort = useRef<AbortController | null>(null);
  /** Cancel was asked for the run being watched: however its stream ends, it ends cancelled. */
  const cancelling = useRef(false);
  useEffect(() => () => abort.current?.abort(), []);

  const start = async (payload: {
    input?: Record<string, unknown> | null;
    command?: { resume: unknown };
  }) => {
    setProblem(undefined);
    setEvents([]);
    setReplies([]);
    setRunId(undefined);
    setPhase("running");
    cancelling.current = false;
    const controller = new AbortController();
    abort.current = controller;
    let n = 0;
    let failed = false;
    try {
      const stream = client.runs.stream(threadId, assistantId, {
        ...payload,
        checkpointId: base?.checkpointId,
        streamMode: [...MODES],
        streamSubgraphs: true,
        signal: controller.signal,
        onRunCreated: ({ run_id }) => setRunId(run_id),
      });
      for await (const chunk of stream) {
        const event = chunk.event as string;
        n += 1;
        const entry = { n, event, data: chunk.data };
        setEvents((all) => (all.length >= MAX_EVENTS ? [...all.slice(1), entry] : [...all, entry]));
        if (event === "error") failed = true;
        if (event === "messages" || event.startsWith("messages|")) {
          const [message] = chunk.data as [{ id?: string; content?: unknown; type?: string }, unknown];
          const text = textOf(message?.content);
          const id = message?.id ?? "";
          const ns = event.split("|").slice(1).join("|");
          if (text)
            setReplies((all) => {
              const i = all.findIndex((r) => r.id === id && r.ns === ns);
              if (i < 0) return [...all, { id, ns, text }];
              const next = all.slice();
              next[i] = { ...all[i], text: all[i].text + text };
              return next;
            });
        }
      }
      setPhase(cancelling.current ? "cancelled" : failed ? "failed" : "done");
    } catch (e) {
      if (controller.signal.aborted || cancelling.current) setPhase("cancelled");
      else {
        setProblem(errorText(e));
        setPhase("failed");
      }
    } finally {
      abort.current = null;
      onEnd();
    }
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    let input: Record<string, unknown>;
    try {
      input = fieldsValue(inputSchema, fields);
    } catch (err) {
      setProblem(errorText(err));
      return;
    }
    void start({ input: Object.keys(input).length ? input : null });
  };

  const resume = (e: FormEvent) => {
    e.preventDefault();
    void start({ input: null, command: { resume: answerValue(answer) } });
    setAnswer("");
  };

  const cancel = async () => {
    cancelling.current = true;
    try {
      if (runId) await client.runs.cancel(threadId, runId);
    } catch (e) {
      setProblem(errorText(e));
    }
    abort.current?.abort();
  };

  const running = phase === "running";
  return (
    <section aria-label="run" className="run">
      {interrupts.length > 0 && !running ? (
        <form className="interrupt" aria-label="interrupt" onSubmit={resume}>
          <h3>Waiting for an answer</h3>
          {interrupts.map((i, k) => (
            <pre key={i.id ?? k} data-testid="interrupt">
              {JSON.stringify(i.value, null, 2)}
            </pre>
          ))}
          <label>
            Answer <input value={answer} onChange={(e) => setAnswer(e.target.value)} autoFocus />
          </label>
          <small className="muted">JSON when it parses, text otherwise.</small>
          <button type="submit">Resume</button>
        </form>
      ) : null}
      <form aria-label="new run" onSubmit={submit}>
        <h3>Run</h3>
        <label>
          Assistant{" "}
          <select value={assistantId} onChange={(e) => setAssistantId(e.target.value)} disabled={running}>
            {(assistants.data ?? []).map((a) => (
              <option key={a.assistant_id} value={a.assistant_id}>
                {a.name} ({a.graph_id})
              </option>
            ))}
          </select>
        </label>
        {base ? (
          <p className="fork">
            From checkpoint <code>{base.label}</code> (a fork){" "}
            <button type="button" className="link" onClick={onClearBase}>
              From the latest instead
            </button>
          </p>
        ) : null}
        {schemas.error ? <p className="error">{errorText(schemas.error)}</p> : null}
        <SchemaFields schema={inputSchema} fields={fields} onChange={setFields} />
        <div className="actions">
          <button type="submit" disabled={running || !assistantId}>
            Start run
          </button>
          <button type="button" disabled={!running} onClick={() => void cancel()}>
            Cancel run
          </button>
          <span className={`status ${phase}`} data-testid="run-phase">
            {phase}
          </span>
          {runId ? <code className="muted">{runId}</code> : null}
        </div>
        {problem ? <p className="error">{problem}</p> : null}
      </form>
      {replies.length > 0 ? (
        <div className="replies">
          {replies.map((r) => (
            <p key={`${r.ns}/${r.id}`} data-testid="reply" data-namespace={r.ns}>
              {r.ns ? <code className="muted">{r.ns} </code> : null}
              {r.text}
            </p>
          ))}
        </div>
      ) : null}
      {events.length > 0 ? (
        <ol className="events" aria-label="events">
          {events.map((e) => (
            <li key={e.n} data-testid="event" data-event={e.event}>
              <strong>{e.event}</strong> <code>{brief(e.event, e.data)}</code>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
