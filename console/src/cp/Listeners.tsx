// Listeners (GET /v2/listeners): the Kubernetes clusters a `hangar listener` runs deployments on. Only
// organizations on the self-hosted enterprise plan have them; the control plane's refusal is shown as it says it.
import { errorText, useLoad } from "../load.ts";
import { statusOf, type CpApi, type Listener, type Page } from "./api.ts";

export function ListenersPage({ api }: { api: CpApi }) {
  const { data, error } = useLoad(() => api<Page<Listener>>("GET", "/v2/listeners?limit=100"), [api]);
  return (
    <section aria-label="listeners">
      <h2>Listeners</h2>
      {error ? (
        <p className={statusOf(error) === 403 ? "muted" : "error"}>{errorText(error)}</p>
      ) : !data ? (
        <p className="muted">Loading listeners…</p>
      ) : data.resources.length === 0 ? (
        <p className="muted">No listeners.</p>
      ) : (
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">ID</th>
              <th scope="col">Compute</th>
              <th scope="col">Compute ID</th>
              <th scope="col">Namespaces</th>
              <th scope="col">Version</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {data.resources.map((l) => (
              <tr key={l.id} data-testid="listener-row">
                <td>
                  <code>{l.id}</code>
                </td>
                <td>{l.compute_type}</td>
                <td>{l.compute_id}</td>
                <td>{(l.compute_config.k8s_namespaces ?? []).join(", ")}</td>
                <td>{l.version ?? ""}</td>
                <td>{new Date(l.created_at).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
