// The control plane console's frame: the key asked for when the control plane refuses the request without it,
// the navigation (deployments, a new deployment, listeners), and the page.
import { useMemo, useState, type FormEvent } from "react";
import { errorText, useLoad } from "../load.ts";
import {
  cpApiUrl,
  makeCpApi,
  saveCpCredential,
  savedCpCredential,
  statusOf,
  type CpCredential,
} from "./api.ts";
import { DeploymentList, DeploymentView } from "./Deployments.tsx";
import { ListenersPage } from "./Listeners.tsx";
import { NewDeployment } from "./NewDeployment.tsx";
import { cpHref, useCpRoute, type CpPage } from "./route.ts";

const NAV: { page: CpPage; title: string }[] = [
  { page: "deployments", title: "Deployments" },
  { page: "new", title: "New deployment" },
  { page: "listeners", title: "Listeners" },
];

function CredentialForm({ refused, onSave }: { refused?: string; onSave: (c: CpCredential) => void }) {
  const [kind, setKind] = useState<"api-key" | "bearer">("api-key");
  const [value, setValue] = useState("");
  const [tenant, setTenant] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (value.trim()) onSave({ kind, value: value.trim(), tenant: tenant.trim() || undefined });
  };
  return (
    <form className="credential" onSubmit={submit} aria-label="credential">
      <h2>The control plane needs an API key</h2>
      <p>
        <code>{cpApiUrl()}</code>
      </p>
      {refused && <p className="error">The server refused it: {refused}</p>}
      <label htmlFor="cp-credential-kind">Kind</label>
      <select
        id="cp-credential-kind"
        value={kind}
        onChange={(e) => setKind(e.target.value as "api-key" | "bearer")}
      >
        <option value="api-key">X-Api-Key header</option>
        <option value="bearer">Authorization: Bearer header</option>
      </select>
      <label htmlFor="cp-credential-key">Key</label>
      <input
        id="cp-credential-key"
        type="password"
        autoFocus
        value={value}
        onChange={(e) => setValue(e.target.value)}
      />
      <label htmlFor="cp-credential-tenant">Workspace ID (X-Tenant-Id, optional)</label>
      <input
        id="cp-credential-tenant"
        value={tenant}
        onChange={(e) => setTenant(e.target.value)}
        placeholder="for an organization key"
      />
      <button type="submit">Use it</button>
      <p className="muted">
        Kept in this browser (localStorage) for this control plane, and sent to it only.
      </p>
    </form>
  );
}

export function App() {
  const [credential, setCredential] = useState<CpCredential>(savedCpCredential);
  const api = useMemo(() => makeCpApi(credential), [credential]);
  const route = useCpRoute();
  // One call that needs the key: 401/403 means asking for one (again, with the reason, when one was sent).
  // Its answer names the client it was made with: pages render only once the current one's probe answered.
  const probe = useLoad(() => api("GET", "/v2/deployments?limit=1").then(() => api), [api]);
  const status = statusOf(probe.error);
  const needsCredential = status === 401 || status === 403;
  const use = (c: CpCredential) => {
    saveCpCredential(c);
    setCredential(c);
  };
  return (
    <div className="app">
      <header>
        <h1>Hangar control plane</h1>
        <nav aria-label="pages">
          {NAV.map(({ page, title }) => (
            <a key={page} href={cpHref({ page })} aria-current={route.page === page ? "page" : undefined}>
              {title}
            </a>
          ))}
        </nav>
        {credential && (
          <button className="link" onClick={() => use(null)}>
            Forget key
          </button>
        )}
      </header>
      {needsCredential ? (
        <CredentialForm refused={credential ? errorText(probe.error) : undefined} onSave={use} />
      ) : probe.error ? (
        <p className="error page-message">Cannot reach the control plane: {errorText(probe.error)}</p>
      ) : probe.data !== api ? (
        <p className="muted page-message">Connecting…</p>
      ) : (
        <main className="full">
          {route.page === "new" ? (
            <NewDeployment api={api} />
          ) : route.page === "listeners" ? (
            <ListenersPage api={api} />
          ) : route.id ? (
            <DeploymentView api={api} id={route.id} />
          ) : (
            <DeploymentList api={api} />
          )}
        </main>
      )}
    </div>
  );
}
