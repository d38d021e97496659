// The console's frame: the credential asked for when the server wants one, the navigation, and the page.
import { useMemo, useState, type FormEvent } from "react";
import { apiUrl, makeClient, saveCredential, savedCredential, statusOf, type Credential } from "./api.ts";
import { AssistantList, AssistantView } from "./Assistants.tsx";
import { CronsPage } from "./Crons.tsx";
import { MetricsPage } from "./Metrics.tsx";
import { StorePage } from "./Store.tsx";
import { ThreadList, ThreadView } from "./Threads.tsx";
import { errorText, useLoad } from "./load.ts";
import { href, PAGES, useRoute, type Page } from "./route.ts";

const TITLES: Record<Page, string> = {
  assistants: "Assistants",
  threads: "Threads",
  store: "Store",
  crons: "Crons",
  metrics: "Metrics",
};

function CredentialForm({ refused, onSave }: { refused: boolean; onSave: (c: Credential) => void }) {
  const [kind, setKind] = useState<"api-key" | "bearer">("api-key");
  const [value, setValue] = useState("");
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (value.trim()) onSave({ kind, value: value.trim() });
  };
  return (
    <form className="credential" onSubmit={submit} aria-label="credential">
      <h2>This server needs a credential</h2>
      <p>
        <code>{apiUrl()}</code>
      </p>
      {refused && <p className="error">The server refused it: check it and try again.</p>}
      <label>
        Kind{" "}
        <select value={kind} onChange={(e) => setKind(e.target.value as "api-key" | "bearer")}>
          <option value="api-key">API key (x-api-key)</option>
          <option value="bearer">Bearer token (Authorization)</option>
        </select>
      </label>
      <label>
        Value <input type="password" autoFocus value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <button type="submit">Use it</button>
      <p className="muted">Kept in this browser (localStorage) for this server, and sent to it only.</p>
    </form>
  );
}

export function App() {
  const [credential, setCredential] = useState<Credential>(savedCredential);
  const client = useMemo(() => makeClient(credential), [credential]);
  const route = useRoute();
  // Bumped when a thread changes (a run, a new thread, a state edit): the thread list loads again.
  const [threadsTick, setThreadsTick] = useState(0);
  // One call that needs the credential: 401/403 means asking for one.
  // Its answer names the client it was made with: pages render only once the current client's probe answered
  // (a credential just forgotten must not let the page load again without one first).
  const probe = useLoad(() => client.assistants.search({ limit: 1 }).then(() => client), [client]);
  const status = statusOf(probe.error);
  const needsCredential = status === 401 || status === 403;
  const use = (c: Credential) => {
    saveCredential(c);
    setCredential(c);
  };
  return (
    <div className="app">
      <header>
        <h1>Hangar</h1>
        <nav aria-label="pages">
          {PAGES.map((p) => (
            <a key={p} href={href({ page: p })} aria-current={route.page === p ? "page" : undefined}>
              {TITLES[p]}
            </a>
          ))}
        </nav>
        {credential && (
          <button className="link" onClick={() => use(null)}>
            Forget credential
          </button>
        )}
      </header>
      {needsCredential ? (
        <CredentialForm refused={credential !== null} onSave={use} />
      ) : probe.error ? (
        <p className="error">Cannot reach the API: {errorText(probe.error)}</p>
      ) : probe.data !== client ? (
        <p className="muted">Connecting…</p>
      ) : route.page === "store" ? (
        <main className="full">
          <StorePage client={client} credential={credential} />
        </main>
      ) : route.page === "crons" ? (
        <main className="full">
          <CronsPage client={client} credential={credential} />
        </main>
      ) : route.page === "metrics" ? (
        <main className="full">
          <MetricsPage client={client} credential={credential} />
        </main>
      ) : (
        <main>
          <aside>
            {route.page === "threads" ? (
              <ThreadList
                client={client}
                selected={route.id}
                tick={threadsTick}
                onChange={() => setThreadsTick((t) => t + 1)}
              />
            ) : (
              <AssistantList client={client} selected={route.id} />
            )}
          </aside>
          <div className="detail">
            {route.id ? (
              route.page === "threads" ? (
                <ThreadView
                  key={route.id}
                  client={client}
                  id={route.id}
                  onChange={() => setThreadsTick((t) => t + 1)}
                />
              ) : (
                <AssistantView client={client} id={route.id} />
              )
            ) : (
              <p className="muted">Pick one on the left.</p>
            )}
          </div>
        </main>
      )}
    </div>
  );
}
