// Assistants: the list, and one assistant with its graph drawn, its config and its versions.
import type { Client } from "@langchain/langgraph-sdk";
import { GraphPicture } from "./Graph.tsx";
import { errorText, useLoad } from "./load.ts";
import { href } from "./route.ts";

export function AssistantList({ client, selected }: { client: Client; selected?: string }) {
  const { data, error } = useLoad(() => client.assistants.search({ limit: 100 }), [client]);
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

export function AssistantView({ client, id }: { client: Client; id: string }) {
  const assistant = useLoad(() => client.assistants.get(id), [client, id]);
  const graph = useLoad(() => client.assistants.getGraph(id, { xray: true }), [client, id]);
  const versions = useLoad(() => client.assistants.getVersions(id, { limit: 20 }), [client, id]);
  if (assistant.error) return <p className="error">{errorText(assistant.error)}</p>;
  const a = assistant.data;
  if (!a) return <p className="muted">Loading…</p>;
  return (
    <section aria-label="assistant">
      <h2>{a.name}</h2>
      <p className="muted">
        graph <code>{a.graph_id}</code> · version {a.version} · <code>{a.assistant_id}</code>
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
      <pre>{JSON.stringify({ config: a.config, context: a.context, metadata: a.metadata }, null, 2)}</pre>
      <h3>Versions</h3>
      <ul>
        {(versions.data ?? []).map((v) => (
          <li key={v.version}>
            version {v.version} · {new Date(v.created_at).toLocaleString()}
          </li>
        ))}
      </ul>
    </section>
  );
}
