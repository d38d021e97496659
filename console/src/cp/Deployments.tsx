// Deployments: the list (name, type, latest revision's status, URL), and one deployment with its revisions, the
// build and deploy logs of one of them (followed live while it is on its way), the link to its Agent Server's
// console, and Redeploy and Delete.
import { useState } from "react";
import { errorText, useAction } from "../load.ts";
import { IN_PROGRESS, type CpApi, type Deployment, type Page, type Revision } from "./api.ts";
import { LogView } from "./Logs.tsx";
import { usePolled } from "./poll.ts";
import { cpHref } from "./route.ts";

const REVISION_FIELDS = ["repo_ref", "langgraph_config_path", "image_uri", "source_tarball_path"] as const;

/** The status badge of a revision (or deployment): its class says whether it is done, failed or on its way. */
export function StatusBadge({ status }: { status?: string | null }) {
  if (!status) return <span className="muted">none</span>;
  const kind = status === "DEPLOYED" || status === "READY" ? "ok" : /FAILED/.test(status) ? "failed" : "";
  const busy = IN_PROGRESS.has(status) ? "busy" : "";
  return <span className={`status ${kind} ${busy}`.trim()}>{status}</span>;
}

/** The deployment's URL and its Agent Server's console (`<url>/console/`), opened in a new tab. */
function DeploymentUrl({ d }: { d: Deployment }) {
  const url = d.source_config.custom_url;
  if (!url) return <span className="muted">none yet</span>;
  return (
    <a href={`${url}/console/`} target="_blank" rel="noopener noreferrer">
      {url}
    </a>
  );
}

type Row = { d: Deployment; latest: Revision | null };

export function DeploymentList({ api }: { api: CpApi }) {
  const { data, error } = usePolled<Row[]>(
    async () => {
      const page = await api<Page<Deployment>>("GET", "/v2/deployments?limit=100");
      return Promise.all(
        page.resources.map(async (d) => ({
          d,
          latest: d.latest_revision_id
            ? await api<Revision>("GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`).catch(
                () => null,
              )
            : null,
        })),
      );
    },
    [api],
    (rows) => rows.some((r) => r.latest && IN_PROGRESS.has(r.latest.status)),
    3000,
  );
  return (
    <section aria-label="deployments">
      <h2>Deployments</h2>
      {error ? <p className="error">{errorText(error)}</p> : null}
      {!data && !error ? <p className="muted">Loading deployments…</p> : null}
      {data && data.length === 0 ? (
        <p className="muted">
          No deployments yet: <a href={cpHref({ page: "new" })}>create one</a>.
        </p>
      ) : null}
      {data && data.length > 0 ? (
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Latest revision</th>
              <th scope="col">URL</th>
            </tr>
          </thead>
          <tbody>
            {data.map(({ d, latest }) => (
              <tr key={d.id} data-testid="deployment-row">
                <td>
                  <a href={cpHref({ page: "deployments", id: d.id })}>{d.name}</a>
                </td>
                <td>{d.source_config.deployment_type ?? ""}</td>
                <td>
                  <StatusBadge status={latest?.status} />
                </td>
                <td>
                  <DeploymentUrl d={d} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

type Detail = { d: Deployment; revisions: Revision[] };

export function DeploymentView({ api, id }: { api: CpApi; id: string }) {
  const [shown, setShown] = useState<string | undefined>();
  const [confirming, setConfirming] = useState(false);
  const { busy, error: actionError, run } = useAction();
  const { data, error, reload } = usePolled<Detail>(
    async () => {
      const [d, revisions] = await Promise.all([
        api<Deployment>("GET", `/v2/deployments/${id}`),
        api<Page<Revision>>("GET", `/v2/deployments/${id}/revisions?limit=20`),
      ]);
      return { d, revisions: revisions.resources };
    },
    [api, id],
    // Polled while a revision is on its way (or the first one is not made yet).
    ({ d, revisions }) => !d.latest_revision_id || revisions.some((r) => IN_PROGRESS.has(r.status)),
  );
  if (error && !data) return <p className="error">{errorText(error)}</p>;
  if (!data) return <p className="muted">Loading…</p>;
  const { d, revisions } = data;
  const latest = revisions.find((r) => r.id === d.latest_revision_id) ?? revisions[0];
  const revision = revisions.find((r) => r.id === shown) ?? latest;
  const live = !!revision && IN_PROGRESS.has(revision.status);

  const redeploy = async () => {
    // A PATCH with the current revision's config: the API makes a new revision of the same source.
    const config: Record<string, string> = {};
    for (const f of REVISION_FIELDS) {
      const v = d.source_revision_config[f];
      if (v) config[f] = v;
    }
    if (await run(() => api("PATCH", `/v2/deployments/${id}`, { source_revision_config: config }))) {
      setShown(undefined);
      reload();
    }
  };
  const remove = async () => {
    if (await run(() => api("DELETE", `/v2/deployments/${id}`), { keepBusy: true }))
      location.hash = cpHref({ page: "deployments" });
  };

  return (
    <section aria-label="deployment">
      <p>
        <a href={cpHref({ page: "deployments" })}>← Deployments</a>
      </p>
      <h2>
        {d.name} <StatusBadge status={latest?.status} />
      </h2>
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{d.id}</code>
        </dd>
        <dt>Type</dt>
        <dd>{d.source_config.deployment_type ?? ""}</dd>
        <dt>Source</dt>
        <dd>
          {d.source}
          {d.source_config.repo_url ? (
            <>
              {" "}
              <code>{d.source_config.repo_url}</code>
            </>
          ) : null}
        </dd>
        <dt>URL</dt>
        <dd>
          <DeploymentUrl d={d} />
          {d.source_config.custom_url ? <span className="muted"> (its Agent Server's console)</span> : null}
        </dd>
        {d.secrets.length > 0 && (
          <>
            <dt>Secrets</dt>
            <dd>{d.secrets.map((s) => s.name).join(", ")}</dd>
          </>
        )}
      </dl>
      <div className="actions">
        <button onClick={redeploy} disabled={busy || !!(latest && IN_PROGRESS.has(latest.status))}>
          Redeploy
        </button>
        <button className="danger" onClick={() => setConfirming(true)} disabled={busy || confirming}>
          Delete
        </button>
      </div>
      {confirming && (
        <form
          className="confirm"
          aria-label="confirm delete"
          onSubmit={(e) => {
            e.preventDefault();
            void remove();
          }}
        >
          <p>
            Delete <strong>{d.name}</strong>? Its Agent Server stops and its URL stops answering.
          </p>
          <button type="submit" className="danger" disabled={busy} autoFocus>
            Delete it
          </button>
          <button type="button" onClick={() => setConfirming(false)} disabled={busy}>
            Cancel
          </button>
        </form>
      )}
      {actionError && <p className="error">{actionError}</p>}
      {error ? <p className="error">{errorText(error)}</p> : null}

      <h3>Revisions</h3>
      {revisions.length === 0 ? (
        <p className="muted">No revision yet.</p>
      ) : (
        <table className="grid" aria-label="revisions">
          <thead>
            <tr>
              <th scope="col">Revision</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Logs</th>
            </tr>
          </thead>
          <tbody>
            {revisions.map((r) => (
              <tr key={r.id} aria-current={r.id === revision?.id ? "true" : undefined}>
                <td>
                  <code>{r.id.slice(0, 8)}</code>
                  {r.id === d.active_revision_id ? <span className="muted"> (serving)</span> : null}
                </td>
                <td>
                  <StatusBadge status={r.status} />
                  {r.status_message ? <div className="error">{r.status_message}</div> : null}
                </td>
                <td>{new Date(r.created_at).toLocaleString()}</td>
                <td>
                  <button className="link" onClick={() => setShown(r.id)} disabled={r.id === revision?.id}>
                    {r.id === revision?.id ? "Shown" : "Show"}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {revision && (
        <>
          <h3>
            Build log <span className="muted">of revision {revision.id.slice(0, 8)}</span>
          </h3>
          <LogView api={api} deploymentId={d.id} revisionId={revision.id} kind="build" live={live} />
          <h3>
            Deploy log <span className="muted">of revision {revision.id.slice(0, 8)}</span>
          </h3>
          <LogView api={api} deploymentId={d.id} revisionId={revision.id} kind="deploy" live={live} />
        </>
      )}
    </section>
  );
}
