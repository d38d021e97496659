// Creating a deployment (POST /v2/deployments): its name, type (dev or prod), its source — a directory on the
// control plane's machine (under HANGAR_CP_SOURCE_ROOTS) or a git URL, both `source: "github"` with
// `source_config.repo_url` — the langgraph.json path in it, and secrets; then on to the deployment's page, where
// its first revision is followed to DEPLOYED.
import { useState, type FormEvent, type ReactNode } from "react";
import { useAction } from "../load.ts";
import type { CpApi, Deployment } from "./api.ts";
import { cpHref } from "./route.ts";

type SecretRow = { key: number; name: string; value: string };

/** A labelled field: the label names the control (`id`), the help text describes it. */
function Field({
  id,
  label,
  help,
  children,
}: {
  id: string;
  label: string;
  help?: string;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {help && (
        <span id={`${id}-help`} className="muted">
          {help}
        </span>
      )}
    </div>
  );
}

export function NewDeployment({ api }: { api: CpApi }) {
  const [name, setName] = useState("");
  const [type, setType] = useState<"dev" | "prod">("dev");
  const [sourceKind, setSourceKind] = useState<"directory" | "git">("directory");
  const [directory, setDirectory] = useState("");
  const [gitUrl, setGitUrl] = useState("");
  const [gitRef, setGitRef] = useState("");
  const [configPath, setConfigPath] = useState("langgraph.json");
  const [secrets, setSecrets] = useState<SecretRow[]>([]);
  const [nextKey, setNextKey] = useState(1);
  const { busy, error, run } = useAction();

  const setSecret = (key: number, patch: Partial<SecretRow>) =>
    setSecrets((rows) => rows.map((r) => (r.key === key ? { ...r, ...patch } : r)));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const create = async () => {
      const created = await api<Deployment>("POST", "/v2/deployments", {
        name: name.trim(),
        source: "github",
        source_config: {
          repo_url: (sourceKind === "directory" ? directory : gitUrl).trim(),
          deployment_type: type,
        },
        source_revision_config: {
          langgraph_config_path: configPath.trim() || "langgraph.json",
          ...(sourceKind === "git" && gitRef.trim() ? { repo_ref: gitRef.trim() } : {}),
        },
        secrets: secrets.filter((s) => s.name.trim()).map((s) => ({ name: s.name.trim(), value: s.value })),
      });
      location.hash = cpHref({ page: "deployments", id: created.id });
    };
    await run(create, { keepBusy: true });
  };

  return (
    <form className="stack" aria-label="new deployment" onSubmit={submit}>
      <h2>New deployment</h2>
      <Field id="cp-new-name" label="Name">
        <input id="cp-new-name" required value={name} onChange={(e) => setName(e.target.value)} autoFocus />
      </Field>
      <Field id="cp-new-type" label="Deployment type">
        <select id="cp-new-type" value={type} onChange={(e) => setType(e.target.value as "dev" | "prod")}>
          <option value="dev">dev</option>
          <option value="prod">prod</option>
        </select>
      </Field>
      <fieldset>
        <legend>Source</legend>
        <label className="inline">
          <input
            type="radio"
            name="source"
            checked={sourceKind === "directory"}
            onChange={() => setSourceKind("directory")}
          />{" "}
          A directory on the control plane's machine
        </label>
        <label className="inline">
          <input
            type="radio"
            name="source"
            checked={sourceKind === "git"}
            onChange={() => setSourceKind("git")}
          />{" "}
          A git repository
        </label>
        {sourceKind === "directory" ? (
          <Field
            id="cp-new-directory"
            label="Directory"
            help="An absolute path under the control plane's HANGAR_CP_SOURCE_ROOTS."
          >
            <input
              id="cp-new-directory"
              aria-describedby="cp-new-directory-help"
              required
              value={directory}
              placeholder="/srv/agents/my-agent"
              onChange={(e) => setDirectory(e.target.value)}
            />
          </Field>
        ) : (
          <>
            <Field id="cp-new-git-url" label="Git URL">
              <input
                id="cp-new-git-url"
                required
                value={gitUrl}
                placeholder="https://github.com/me/my-agent.git"
                onChange={(e) => setGitUrl(e.target.value)}
              />
            </Field>
            <Field id="cp-new-git-ref" label="Git ref (optional)">
              <input
                id="cp-new-git-ref"
                value={gitRef}
                placeholder="main"
                onChange={(e) => setGitRef(e.target.value)}
              />
            </Field>
          </>
        )}
        <Field
          id="cp-new-config"
          label="Config path"
          help="The langgraph.json of the project, relative to its root."
        >
          <input
            id="cp-new-config"
            aria-describedby="cp-new-config-help"
            value={configPath}
            onChange={(e) => setConfigPath(e.target.value)}
          />
        </Field>
      </fieldset>
      <fieldset>
        <legend>Secrets</legend>
        <p className="muted">
          Environment variables of the deployment; the API never shows their values again.
        </p>
        {secrets.map((s, i) => (
          <div className="secret-row" key={s.key}>
            <Field id={`cp-secret-${s.key}-name`} label={`Secret ${i + 1} name`}>
              <input
                id={`cp-secret-${s.key}-name`}
                value={s.name}
                onChange={(e) => setSecret(s.key, { name: e.target.value })}
              />
            </Field>
            <Field id={`cp-secret-${s.key}-value`} label={`Secret ${i + 1} value`}>
              <input
                id={`cp-secret-${s.key}-value`}
                type="password"
                value={s.value}
                onChange={(e) => setSecret(s.key, { value: e.target.value })}
              />
            </Field>
            <button type="button" onClick={() => setSecrets((rows) => rows.filter((r) => r.key !== s.key))}>
              Remove secret {i + 1}
            </button>
          </div>
        ))}
        <button
          type="button"
          onClick={() => {
            setSecrets((rows) => [...rows, { key: nextKey, name: "", value: "" }]);
            setNextKey((k) => k + 1);
          }}
        >
          Add a secret
        </button>
      </fieldset>
      {error && <p className="error">{error}</p>}
      <div className="actions">
        <button type="submit" disabled={busy}>
          {busy ? "Creating…" : "Create deployment"}
        </button>
      </div>
    </form>
  );
}
