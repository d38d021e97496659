// The crons page: the crons (filtered by assistant or thread, paged), each with its schedule, assistant, thread,
// next run, end time and whether it is enabled; a form that creates one (an assistant from the list, a schedule,
// the run's input as JSON, a thread if it runs on one), an edit of a cron's schedule, time zone and end time, a
// switch that pauses or resumes it, and a delete that asks first.
import { useState, type FormEvent } from "react";
import type { Assistant, Client, Cron } from "@langchain/langgraph-sdk";
import type { Credential } from "./api.ts";
import { errorText, useAction, useLoad } from "./load.ts";
import { href } from "./route.ts";
import { ConfirmDelete, FormMessages, parseJsonField } from "./forms.tsx";
import "./pages.css";

const PAGE = 20;

const when = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : "—");

function CreateCron({
  client,
  assistants,
  onCreated,
}: {
  client: Client;
  assistants: Assistant[];
  onCreated: () => void;
}) {
  const [assistantId, setAssistantId] = useState("");
  const [schedule, setSchedule] = useState("");
  const [timezone, setTimezone] = useState("");
  const [threadId, setThreadId] = useState("");
  const [endTime, setEndTime] = useState("");
  const [inputText, setInputText] = useState("");
  const [keepThreads, setKeepThreads] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<string[]>([]);
  const [status, setStatus] = useState<string>();
  const { busy, error, run } = useAction();
  // The first assistant until one is picked.
  const assistant = assistantId || assistants[0]?.assistant_id || "";
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setStatus(undefined);
    const problems: string[] = [];
    if (!assistant) problems.push("Assistant: required");
    if (!schedule.trim()) problems.push("Schedule: required (cron syntax, e.g. 0 9 * * 1-5)");
    const input = parseJsonField("Input", inputText);
    if (input.error) problems.push(input.error);
    const end = endTime ? new Date(endTime) : undefined;
    if (end && Number.isNaN(end.getTime())) problems.push("End time: not a date");
    setFieldErrors(problems);
    if (problems.length) return;
    const thread = threadId.trim();
    const payload = {
      schedule: schedule.trim(),
      timezone: timezone.trim() || undefined,
      input: input.value as Record<string, unknown> | undefined,
      endTime: end?.toISOString(),
      // Each run's own thread is deleted after it unless kept (a cron on a given thread keeps that thread).
      onRunCompleted: thread ? undefined : keepThreads ? ("keep" as const) : undefined,
    };
    await run(async () => {
      const cron = thread
        ? await client.crons.createForThread(thread, assistant, payload)
        : await client.crons.create(assistant, payload);
      setStatus(`Created cron ${cron.cron_id}.`);
      onCreated();
    });
  };
  return (
    <form className="card stacked" onSubmit={submit} aria-label="create cron">
      <h2>Create a cron</h2>
      <label>
        Assistant{" "}
        <select value={assistant} onChange={(e) => setAssistantId(e.target.value)}>
          {assistants.map((a) => (
            <option key={a.assistant_id} value={a.assistant_id}>
              {a.name} ({a.graph_id})
            </option>
          ))}
        </select>
      </label>
      <label>
        Schedule{" "}
        <input value={schedule} placeholder="0 9 * * 1-5" onChange={(e) => setSchedule(e.target.value)} />
      </label>
      <label>
        Timezone (optional){" "}
        <input value={timezone} placeholder="Europe/Paris" onChange={(e) => setTimezone(e.target.value)} />
      </label>
      <label>
        Thread id (optional: runs on that thread; without one each run gets a new thread){" "}
        <input value={threadId} onChange={(e) => setThreadId(e.target.value)} />
      </label>
      <label>
        <input
          type="checkbox"
          checked={keepThreads}
          disabled={threadId.trim() !== ""}
          onChange={(e) => setKeepThreads(e.target.checked)}
        />{" "}
        Keep each run&apos;s thread (without a thread id; by default it is deleted once the run is done)
      </label>
      <label>
        End time (optional){" "}
        <input type="datetime-local" value={endTime} onChange={(e) => setEndTime(e.target.value)} />
      </label>
      <label>
        Input (JSON, optional)
        <textarea
          rows={4}
          value={inputText}
          spellCheck={false}
          placeholder='{"messages": [{"role": "user", "content": "Good morning"}]}'
          onChange={(e) => setInputText(e.target.value)}
        />
      </label>
      <div className="actions">
        <button type="submit" disabled={busy}>
          Create cron
        </button>
      </div>
      <FormMessages errors={fieldErrors} error={error} status={status} />
    </form>
  );
}

/** A `datetime-local` field's value for an ISO date (local time, to the minute); "" for none. */
function localInput(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A cron's schedule, time zone and end time edited in place (an emptied end time removes it). */
function EditCron({
  client,
  cron,
  onDone,
}: {
  client: Client;
  cron: Cron;
  onDone: (changed: boolean) => void;
}) {
  const [schedule, setSchedule] = useState(cron.schedule);
  const [timezone, setTimezone] = useState(cron.timezone ?? "");
  const [endTime, setEndTime] = useState(localInput(cron.end_time));
  const [fieldErrors, setFieldErrors] = useState<string[]>([]);
  const { busy, error, run } = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problems: string[] = [];
    if (!schedule.trim()) problems.push("Schedule: required (cron syntax, e.g. 0 9 * * 1-5)");
    const end = endTime ? new Date(endTime) : null;
    if (end && Number.isNaN(end.getTime())) problems.push("End time: not a date");
    setFieldErrors(problems);
    if (problems.length) return;
    const saved = await run(
      () =>
        client.crons.update(cron.cron_id, {
          schedule: schedule.trim(),
          // The time zone only when one is given (the API keeps the current one otherwise).
          timezone: timezone.trim() || undefined,
          endTime: end ? end.toISOString() : null,
        }),
      { keepBusy: true },
    );
    if (saved) onDone(true);
  };
  return (
    <form
      className="inline-form"
      aria-label={`edit cron ${cron.cron_id.slice(0, 8)}`}
      onSubmit={submit}
      onKeyDown={(e) => e.key === "Escape" && onDone(false)}
    >
      <label>
        Schedule <input value={schedule} autoFocus onChange={(e) => setSchedule(e.target.value)} />
      </label>
      <label>
        Timezone <input value={timezone} placeholder="UTC" onChange={(e) => setTimezone(e.target.value)} />
      </label>
      <label>
        Ends <input type="datetime-local" value={endTime} onChange={(e) => setEndTime(e.target.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Save
      </button>
      <button type="button" onClick={() => onDone(false)}>
        Cancel
      </button>
      <FormMessages errors={fieldErrors} error={error} />
    </form>
  );
}

/** Pauses or resumes a cron (`enabled`). */
function ToggleCron({ client, cron, onChanged }: { client: Client; cron: Cron; onChanged: () => void }) {
  const { busy, error, run } = useAction();
  const enabled = cron.enabled !== false;
  const toggle = async () => {
    if (await run(() => client.crons.update(cron.cron_id, { enabled: !enabled }))) onChanged();
  };
  return (
    <>
      {enabled ? "yes" : "no"}{" "}
      <button
        type="button"
        disabled={busy}
        aria-label={`${enabled ? "Disable" : "Enable"} cron ${cron.cron_id.slice(0, 8)}`}
        onClick={toggle}
      >
        {enabled ? "Disable" : "Enable"}
      </button>
      {error ? <span className="error"> {error}</span> : null}
    </>
  );
}

function CronRow({
  client,
  cron,
  assistantName,
  onChanged,
}: {
  client: Client;
  cron: Cron;
  assistantName?: string;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  if (editing)
    return (
      <tr data-testid="cron" data-cron-id={cron.cron_id}>
        <td colSpan={8}>
          <EditCron
            client={client}
            cron={cron}
            onDone={(changed) => {
              setEditing(false);
              if (changed) onChanged();
            }}
          />
        </td>
      </tr>
    );
  return (
    <tr data-testid="cron" data-cron-id={cron.cron_id}>
      <td>
        <code>{cron.schedule}</code>
        {cron.timezone ? <span className="muted"> {cron.timezone}</span> : null}
      </td>
      <td>
        <a href={href({ page: "assistants", id: cron.assistant_id })}>
          {assistantName ?? <code>{cron.assistant_id.slice(0, 8)}</code>}
        </a>
      </td>
      <td>
        {cron.thread_id ? (
          <a href={href({ page: "threads", id: cron.thread_id })}>
            <code>{cron.thread_id.slice(0, 8)}</code>
          </a>
        ) : (
          <span className="muted">new each run</span>
        )}
      </td>
      <td className="nowrap">{when(cron.next_run_date)}</td>
      <td className="nowrap">{when(cron.end_time)}</td>
      <td className="nowrap">
        <ToggleCron client={client} cron={cron} onChanged={onChanged} />
      </td>
      <td>
        <code title={cron.cron_id}>{cron.cron_id.slice(0, 8)}</code>
        <span className="muted"> {when(cron.created_at)}</span>
      </td>
      <td className="nowrap">
        <button
          type="button"
          aria-label={`Edit cron ${cron.cron_id.slice(0, 8)}`}
          onClick={() => setEditing(true)}
        >
          Edit
        </button>{" "}
        <ConfirmDelete
          what={`cron ${cron.schedule} (${cron.cron_id.slice(0, 8)})`}
          onDelete={async () => {
            await client.crons.delete(cron.cron_id);
            onChanged();
          }}
        />
      </td>
    </tr>
  );
}

function CronList({
  client,
  assistants,
  version,
  onChanged,
}: {
  client: Client;
  assistants: Assistant[];
  version: number;
  onChanged: () => void;
}) {
  const [assistantId, setAssistantId] = useState("");
  const [threadText, setThreadText] = useState("");
  const [threadId, setThreadId] = useState("");
  const [offset, setOffset] = useState(0);
  const { data, error } = useLoad(
    () =>
      client.crons.search({
        assistantId: assistantId || undefined,
        threadId: threadId || undefined,
        limit: PAGE,
        offset,
      }),
    [client, assistantId, threadId, offset, version],
  );
  const names = new Map(assistants.map((a) => [a.assistant_id, a.name]));
  return (
    <section aria-label="crons">
      <h2>Crons</h2>
      <form
        className="inline-form"
        aria-label="filter crons"
        onSubmit={(e) => {
          e.preventDefault();
          setThreadId(threadText.trim());
          setOffset(0);
        }}
      >
        <label>
          Assistant{" "}
          <select
            value={assistantId}
            onChange={(e) => {
              setAssistantId(e.target.value);
              setOffset(0);
            }}
          >
            <option value="">any</option>
            {assistants.map((a) => (
              <option key={a.assistant_id} value={a.assistant_id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Thread{" "}
          <input value={threadText} placeholder="thread id" onChange={(e) => setThreadText(e.target.value)} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {error ? <p className="error">{errorText(error)}</p> : null}
      {!data && !error ? <p className="muted">Loading crons…</p> : null}
      {data && data.length > 0 ? (
        <table className="rows">
          <thead>
            <tr>
              <th scope="col">Schedule</th>
              <th scope="col">Assistant</th>
              <th scope="col">Thread</th>
              <th scope="col">Next run</th>
              <th scope="col">Ends</th>
              <th scope="col">Enabled</th>
              <th scope="col">Cron · created</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {data.map((c) => (
              <CronRow
                key={c.cron_id}
                client={client}
                cron={c}
                assistantName={names.get(c.assistant_id)}
                onChanged={onChanged}
              />
            ))}
          </tbody>
        </table>
      ) : data && offset === 0 ? (
        <p className="muted">No crons.</p>
      ) : null}
      <div className="pager" role="group" aria-label="crons pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </button>
        <button type="button" disabled={(data?.length ?? 0) < PAGE} onClick={() => setOffset(offset + PAGE)}>
          Next
        </button>
      </div>
    </section>
  );
}

export function CronsPage({ client }: { client: Client; credential: Credential }) {
  const assistants = useLoad(() => client.assistants.search({ limit: 100 }), [client]);
  // Bumped after a create, an edit or a delete: the list loads again.
  const [version, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);
  if (assistants.error) return <p className="error">{errorText(assistants.error)}</p>;
  if (!assistants.data) return <p className="muted">Loading assistants…</p>;
  return (
    <div className="console-page pages-stack">
      <CronList client={client} assistants={assistants.data} version={version} onChanged={bump} />
      <CreateCron client={client} assistants={assistants.data} onCreated={bump} />
    </div>
  );
}
