// Starting a run on a thread and watching it: the assistant, an input form from its graph's input schema (or an
// answer to the thread's interrupt), optionally from an older checkpoint (a fork); the run streams values,
// updates, messages, custom events and subgraphs' events (their namespace in the event's name), the messages'
// tokens joined into text as they arrive; Cancel stops it.
import { useEffect, useRef, useState, type FormEvent } from "react";
import type { Client, Interrupt } from "@langchain/langgraph-sdk";
import { errorText, useLoad } from "./load.ts";
import {
  clearMessages,
  fieldsValue,
  initialFields,
  SchemaFields,
  type Fields,
  type ObjectSchema,
} from "./SchemaForm.tsx";

/** An event as shown; a message's consecutive token chunks are one entry (`chunks` of them, `text` joined). */
type Event = { n: number; event: string; data: unknown; message?: string; text?: string; chunks?: number };
type Phase = "idle" | "running" | "done" | "interrupted" | "cancelled" | "failed";

const MAX_EVENTS = 500;
const MODES = ["values", "updates", "messages-tuple", "custom"] as const;

/** The text of a message chunk's content: a string, or the text blocks of a list. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((b) => (b && typeof b === "object" && "text" in b ? String(b.text) : "")).join("");
  return "";
}

const isMessages = (event: string): boolean => event === "messages" || event.startsWith("messages|");

/** Whether an event says the run stopped at an interrupt (`__interrupt__` in its values or updates). */
const interrupted = (event: string, data: unknown): boolean =>
  (event.startsWith("values") || event.startsWith("updates")) &&
  typeof data === "object" &&
  data !== null &&
  "__interrupt__" in data;

/** A short line for an event: a message's chunks as their text and node, anything else as JSON. */
function brief(e: Event): string {
  if (e.text !== undefined) {
    const meta = (e.data as [unknown, { langgraph_node?: string } | undefined])[1];
    const type = (e.data as [{ type?: string }])[0]?.type ?? "message";
    const chunks = e.chunks === 1 ? "1 chunk" : `${e.chunks} chunks`;
    return `${JSON.stringify(e.text)} · ${type}${meta?.langgraph_node ? ` from ${meta.langgraph_node}` : ""} · ${chunks}`;
  }
  const s = JSON.stringify(e.data) ?? "";
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
  onStart,
  onEnd,
}: {
  client: Client;
  threadId: string;
  defaultAssistant?: string;
  interrupts: Interrupt[];
  base?: RunBase;
  onClearBase: () => void;
  /** The run was created (the thread is busy now). */
  onStart: () => void;
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
  const form = useRef<HTMLFormElement>(null);
  const [fields, setFields] = useState<Fields>({});
  useEffect(() => setFields(initialFields(inputSchema)), [inputSchema]);
  // A fork chosen in the history (far down the page): the form comes into view with its first field focused
  // (once the input schema's fields are there).
  useEffect(() => {
    if (!base) return;
    form.current?.scrollIntoView({ block: "start" });
    form.current?.querySelector<HTMLElement>(".fields input, .fields textarea, .fields select")?.focus();
  }, [base, inputSchema]);
  const [answer, setAnswer] = useState("");
  const [problem, setProblem] = useState<string>();
  const [phase, setPhase] = useState<Phase>("idle");
  const [runId, setRunId] = useState<string>();
  const [events, setEvents] = useState<Event[]>([]);
  const [replies, setReplies] = useState<{ id: string; ns: string; text: string }[]>([]);
  const abort = useRef<AbortController | null>(null);

  /** Cancel was asked for the run being watched: however its stream ends, it ends cancelled. */
  const cancelling = useRef(false);
  /** Numbers the events shown, across runs: each entry its own key. */
  const seq = useRef(0);
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
    let failed = false;
    let stopped = false;
    try {
      const stream = client.runs.stream(threadId, assistantId, {
        ...payload,
        checkpointId: base?.checkpointId,
        streamMode: [...MODES],
        streamSubgraphs: true,
        signal: controller.signal,
        onRunCreated: ({ run_id }) => {
          setRunId(run_id);
          onStart();
        },
      });
      for await (const chunk of stream) {
        const event = chunk.event as string;
        const n = ++seq.current;
        if (event === "error") failed = true;
        if (interrupted(event, chunk.data)) stopped = true;
        if (!isMessages(event)) {
          const entry: Event = { n, event, data: chunk.data };
          setEvents((all) => [...all.slice(all.length >= MAX_EVENTS ? 1 : 0), entry]);
          continue;
        }
        const [message] = chunk.data as [{ id?: string; content?: unknown }, unknown];
        const text = textOf(message?.content);
        const id = message?.id ?? "";
        const ns = event.split("|").slice(1).join("|");
        // A chunk of the message the last entry shows joins it; another message starts an entry.
        setEvents((all) => {
          const last = all[all.length - 1];
          if (last && last.event === event && last.message === id)
            return [...all.slice(0, -1), { ...last, text: last.text + text, chunks: (last.chunks ?? 0) + 1 }];
          const entry: Event = { n, event, data: chunk.data, message: id, text, chunks: 1 };
          return [...all.slice(all.length >= MAX_EVENTS ? 1 : 0), entry];
        });
        if (text)
          setReplies((all) => {
            const i = all.findIndex((r) => r.id === id && r.ns === ns);
            if (i < 0) return [...all, { id, ns, text }];
            const next = all.slice();
            next[i] = { ...all[i], text: all[i].text + text };
            return next;
          });
      }
      setPhase(cancelling.current ? "cancelled" : failed ? "failed" : stopped ? "interrupted" : "done");
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
    if (abort.current) return;
    let input: Record<string, unknown>;
    try {
      input = fieldsValue(inputSchema, fields);
    } catch (err) {
      setProblem(errorText(err));
      return;
    }
    void start({ input: Object.keys(input).length ? input : null });
    // A message is sent once: its box is emptied for the next one.
    setFields(clearMessages(inputSchema, fields));
  };

  const resume = (e: FormEvent) => {
    e.preventDefault();
    if (abort.current) return;
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
      <form aria-label="new run" onSubmit={submit} ref={form}>
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
            <li key={e.n} data-testid="event" data-event={e.event} data-chunks={e.chunks}>
              <strong>{e.event}</strong> <code>{brief(e)}</code>
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
