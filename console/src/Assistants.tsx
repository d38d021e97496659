// Assistants: the list, and one assistant with its graph drawn, its config edited through a form built from its
// graph's config schema (each save a new version), and its versions (any can be made the latest again).
import { useState, type FormEvent } from "react";
import type { Assistant, Client } from "@langchain/langgraph-sdk";
import { GraphPicture } from "./Graph.tsx";
import { errorText, useLoad } from "./load.ts";
import { href } from "./route.ts";
import { fieldsValue, initialFields, SchemaFields, type Fields, type ObjectSchema } from "./SchemaForm.tsx";

export function AssistantList({ client, selected }: { client: Client; selected?: string }) {
  // Loaded again when another one is opened (one just created is then listed).
  const { data, error } = useLoad(() => client.assistants.search({ limit: 100 }), [client, selected], true);
  if (error) return <p className="error">{errorText(error)}</p>;
  if (!data) return <p className="muted">Loading assistants…</p>;
  return (
    <nav aria-label="assistants" className="list">
      {data.map((a) => (
        <a
          key={a.assistant_id}
          href={href({ page: "assistants", id: a.assistant_id })}
          aria-current={a.assistant_id === selected ? "page" : undefined}
        >
          <strong>{a.name}</strong>
          <span className="muted"> {a.graph_id}</span>
        </a>
      ))}
      {data.length === 0 && <p className="muted">No assistants.</p>}
    </nav>
  );
}

/** The assistant's `configurable` through the config schema's fields (JSON when the schema names none). */
function ConfigForm({
  client,
  assistant,
  onSaved,
}: {
  client: Client;
  assistant: Assistant;
  onSaved: () => void;
}) {
  const schemas = useLoad(
    () => client.assistants.getSchemas(assistant.assistant_id),
    [client, assistant.assistant_id],
  );
  const schema = schemas.data?.config_schema as ObjectSchema | undefined;
  const configurable = (assistant.config?.configurable ?? {}) as Record<string, unknown>;
  const named = Object.keys(schema?.properties ?? {}).length > 0;
  const [fields, setFields] = useState<Fields>();
  const [json, setJson] = useState<string>();
  const [problem, setProblem] = useState<string>();
  const [saved, setSaved] = useState<number>();
  if (schemas.error) return <p className="error">{errorText(schemas.error)}</p>;
  if (!schemas.data) return <p className="muted">Loading the config schema…</p>;
  const shownFields = fields ?? initialFields(schema, configurable);
  const shownJson = json ?? JSON.stringify(configurable, null, 2);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setProblem(undefined);
    let next: Record<string, unknown>;
    try {
      if (named) {
        // The schema's fields as the form has them (an emptied one removed); other keys kept as they were.
        const given = fieldsValue(schema, shownFields, true);
        next = Object.fromEntries(Object.entries(configurable).filter(([k]) => !(k in schema!.properties!)));
        Object.assign(next, given);
      } else next = JSON.parse(shownJson);
    } catch (err) {
      setProblem(err instanceof SyntaxError ? "configurable: not JSON" : errorText(err));
      return;
    }
    try {
      const updated = await client.assistants.update(assistant.assistant_id, {
        config: { ...assistant.config, configurable: next },
      });
      setSaved(updated.version);
      setFields(undefined);
      setJson(undefined);
      onSaved();
    } catch (err) {
      setProblem(errorText(err));
    }
  };
  return (
    <form aria-label="config" onSubmit={save} className="config-form">
      {named ? (
        <SchemaFields schema={schema} fields={shownFields} onChange={setFields} />
      ) : (
        <label className="field json">
          <span>configurable (JSON)</span>
          <textarea rows={6} value={shownJson} onChange={(e) => setJson(e.target.value)} />
        </label>
      )}
      <div className="actions">
        <button type="submit">Save config</button>
        {saved !== undefined ? <span className="muted">Saved as version {saved}.</span> : null}
      </div>
      {problem ? <p className="error">{problem}</p> : null}
    </form>
  );
}

/** A new assistant of the same graph, starting from this one's config, context and metadata. */
function NewAssistant({ client, from }: { client: Client; from: Assistant }) {
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string>();
  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) {
      setProblem("name: required");
      return;
    }
    try {
      const made = await client.assistants.create({
        graphId: from.graph_id,
        name: name.trim(),
        config: from.config,
        context: from.context ?? undefined,
        metadata: from.metadata ?? undefined,
      });
      location.hash = href({ page: "assistants", id: made.assistant_id });
    } catch (err) {
      setProblem(errorText(err));
    }
  };
  return (
    <form aria-label="new assistant" onSubmit={create} className="actions">
      <label>
        New assistant from this one, named <input value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <button type="submit">Create</button>
      {problem ? <span className="error">{problem}</span> : null}
    </form>
  );
}

export function AssistantView({ client, id }: { client: Client; id: string }) {
  const [tick, setTick] = useState(0);
  const refresh = () => setTick((t) => t + 1);
  const assistant = useLoad(() => client.assistants.get(id), [client, id, tick], true);
  const graph = useLoad(() => client.assistants.getGraph(id, { xray: true }), [client, id]);
  const versions = useLoad(() => client.assistants.getVersions(id, { limit: 20 }), [client, id, tick], true);
  const [problem, setProblem] = useState<string>();
  if (assistant.error) return <p className="error">{errorText(assistant.error)}</p>;
  const a = assistant.data;
  if (!a) return <p className="muted">Loading…</p>;
  const makeLatest = async (version: number) => {
    try {
      await client.assistants.setLatest(id, version);
      refresh();
    } catch (e) {
      setProblem(errorText(e));
    }
  };
  return (
    <section aria-label="assistant">
      <h2>{a.name}</h2>
      <p className="muted">
        graph <code>{a.graph_id}</code> · version <span data-testid="assistant-version">{a.version}</span> ·{" "}
        <code>{a.assistant_id}</code>
      </p>
      <h3>Graph</h3>
      {graph.error ? (
        <p className="error">{errorText(graph.error)}</p>
      ) : graph.data ? (
        <GraphPicture graph={graph.data as never} />
      ) : (
        <p className="muted">Drawing…</p>
      )}
      <h3>Config</h3>
      <ConfigForm key={a.assistant_id} client={client} assistant={a} onSaved={refresh} />
      <NewAssistant client={client} from={a} />
      <details>
        <summary>As stored</summary>
        <pre>{JSON.stringify({ config: a.config, context: a.context, metadata: a.metadata }, null, 2)}</pre>
      </details>
      <h3>Versions</h3>
      {problem ? <p className="error">{problem}</p> : null}
      <ul aria-label="versions">
        {(versions.data ?? []).map((v) => (
          <li key={v.version} data-testid="version">
            version {v.version} · {new Date(v.created_at).toLocaleString()}
            {v.version === a.version ? (
              <span className="muted"> (latest)</span>
            ) : (
              <>
                {" "}
                <button className="link" onClick={() => void makeLatest(v.version)}>
                  Make it the latest
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
