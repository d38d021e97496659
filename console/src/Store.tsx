// The store page: the namespaces (filtered by a prefix, paged), the items under one namespace (a query, a JSON
// filter, paged), one item's value with its created and updated times, a form that puts an item and a delete
// that asks first. A namespace is written with dots (`users.alice`, as the SDK sends it) and is the route's id
// (`#/store/users.alice`).
import { useEffect, useState, type FormEvent } from "react";
import type { Client, Item } from "@langchain/langgraph-sdk";
import type { Credential } from "./api.ts";
import { ConfirmDelete, FormMessages, parseJsonField } from "./forms.tsx";
import { errorText, useAction, useLoad } from "./load.ts";
import { href, useRoute } from "./route.ts";
import "./pages.css";

const PAGE = 20;

/** `users.alice` -> ["users", "alice"] (empty labels dropped). */
export const splitNamespace = (text: string): string[] =>
  text
    .split(".")
    .map((l) => l.trim())
    .filter((l) => l !== "");

const joinNamespace = (ns: string[]): string => ns.join(".");

/** Whether `ns` is `prefix` or under it (label by label). */
const under = (ns: string[], prefix: string[]): boolean => prefix.every((l, i) => ns[i] === l);

function Pager({
  offset,
  count,
  onOffset,
  label,
}: {
  offset: number;
  count: number | undefined;
  onOffset: (o: number) => void;
  label: string;
}) {
  return (
    <div className="pager" role="group" aria-label={`${label} pages`}>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - PAGE))}>
        Previous
      </button>
      <button type="button" disabled={(count ?? 0) < PAGE} onClick={() => onOffset(offset + PAGE)}>
        Next
      </button>
      <span className="muted">{count ? `${offset + 1}–${offset + count}` : offset ? "no more" : ""}</span>
    </div>
  );
}

function NamespaceList({
  client,
  selected,
  version,
}: {
  client: Client;
  selected?: string;
  version: number;
}) {
  const [prefix, setPrefix] = useState("");
  const [offset, setOffset] = useState(0);
  const prefixLabels = splitNamespace(prefix);
  const { data, error } = useLoad(
    () =>
      client.store.listNamespaces({
        prefix: prefixLabels.length ? prefixLabels : undefined,
        limit: PAGE,
        offset,
      }),
    [client, JSON.stringify(prefixLabels), offset, version],
  );
  const namespaces = data?.namespaces;
  return (
    <div className="list pages-panel">
      <h2>Namespaces</h2>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Prefix{" "}
          <input
            value={prefix}
            placeholder="users.alice"
            onChange={(e) => {
              setPrefix(e.target.value);
              setOffset(0);
            }}
          />
        </label>
      </form>
      {error ? <p className="error">{errorText(error)}</p> : null}
      {!data && !error ? <p className="muted">Loading namespaces…</p> : null}
      <nav aria-label="namespaces">
        {(namespaces ?? []).map((ns) => {
          const id = joinNamespace(ns);
          return (
            <a
              key={id}
              href={href({ page: "store", id })}
              aria-current={id === selected ? "page" : undefined}
            >
              <code>{id}</code>
            </a>
          );
        })}
      </nav>
      {namespaces && namespaces.length === 0 && offset === 0 ? (
        <p className="muted pad">No namespaces{prefixLabels.length ? " with this prefix" : ""}.</p>
      ) : null}
      <Pager offset={offset} count={namespaces?.length} onOffset={setOffset} label="namespaces" />
    </div>
  );
}

type Selected = { namespace: string[]; key: string };

function ItemList({
  client,
  namespace,
  version,
  selected,
  onSelect,
}: {
  client: Client;
  namespace: string[];
  version: number;
  selected?: Selected;
  onSelect: (s: Selected) => void;
}) {
  const [query, setQuery] = useState("");
  const [filterText, setFilterText] = useState("");
  // What the search form last applied: typing does not search, submitting does.
  const [applied, setApplied] = useState<{ query?: string; filter?: Record<string, unknown> }>({});
  const [filterError, setFilterError] = useState<string>();
  const [offset, setOffset] = useState(0);
  const nsId = joinNamespace(namespace);
  useEffect(() => setOffset(0), [nsId]);
  const { data, error } = useLoad(
    () => client.store.searchItems(namespace, { ...applied, limit: PAGE, offset }),
    [client, nsId, JSON.stringify(applied), offset, version],
  );
  const search = (e: FormEvent) => {
    e.preventDefault();
    const filter = parseJsonField("Filter", filterText, true);
    setFilterError(filter.error);
    if (filter.error) return;
    setApplied({
      query: query.trim() || undefined,
      filter: filter.value as Record<string, unknown> | undefined,
    });
    setOffset(0);
  };
  const items = data?.items;
  return (
    <section aria-label="items">
      <h2>
        Items in <code>{nsId}</code>
      </h2>
      <form className="inline-form" onSubmit={search} aria-label="search items">
        <label>
          Query{" "}
          <input value={query} onChange={(e) => setQuery(e.target.value)} placeholder="semantic search" />
        </label>
        <label>
          Filter{" "}
          <input
            value={filterText}
            onChange={(e) => setFilterText(e.target.value)}
            placeholder='{"kind": "note"}'
            aria-invalid={filterError ? true : undefined}
          />
        </label>
        <button type="submit">Search</button>
        {filterError && <span className="error">{filterError}</span>}
      </form>
      {error ? <p className="error">{errorText(error)}</p> : null}
      {!data && !error ? <p className="muted">Loading items…</p> : null}
      {items && items.length > 0 ? (
        <table className="rows">
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Namespace</th>
              <th scope="col">Updated</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => {
              const itemNs = joinNamespace(item.namespace);
              const current =
                selected && joinNamespace(selected.namespace) === itemNs && selected.key === item.key;
              return (
                <tr
                  key={`${itemNs}\u0000${item.key}`}
                  data-testid="store-item"
                  aria-current={current ? "true" : undefined}
                >
                  <td>
                    <button
                      type="button"
                      className="link"
                      onClick={() => onSelect({ namespace: item.namespace, key: item.key })}
                    >
                      {item.key}
                    </button>
                  </td>
                  <td>
                    <code>{itemNs}</code>
                  </td>
                  <td className="nowrap">{new Date(item.updatedAt).toLocaleString()}</td>
                  <td className="preview">
                    <code>{preview(item.value)}</code>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : items && offset === 0 ? (
        <p className="muted">No items.</p>
      ) : null}
      <Pager offset={offset} count={items?.length} onOffset={setOffset} label="items" />
    </section>
  );
}

function preview(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function ItemView({
  client,
  selected,
  version,
  onEdit,
  onDeleted,
}: {
  client: Client;
  selected: Selected;
  version: number;
  onEdit: (item: Item) => void;
  onDeleted: () => void;
}) {
  const nsId = joinNamespace(selected.namespace);
  const { data, error } = useLoad(
    () => client.store.getItem(selected.namespace, selected.key),
    [client, nsId, selected.key, version],
  );
  return (
    <section aria-label="item" className="card">
      <h3>
        Item <code>{selected.key}</code> in <code>{nsId}</code>
      </h3>
      {error ? <p className="error">{errorText(error)}</p> : null}
      {data === undefined && !error ? <p className="muted">Loading…</p> : null}
      {data === null ? <p className="muted">Not found (deleted?).</p> : null}
      {data ? (
        <>
          <dl className="facts">
            <dt>Created</dt>
            <dd>{new Date(data.createdAt).toLocaleString()}</dd>
            <dt>Updated</dt>
            <dd>{new Date(data.updatedAt).toLocaleString()}</dd>
          </dl>
          <pre aria-label="value">{JSON.stringify(data.value, null, 2)}</pre>
          <div className="actions">
            <button type="button" onClick={() => onEdit(data)}>
              Edit
            </button>
            <ConfirmDelete
              what={`item ${data.key}`}
              onDelete={async () => {
                await client.store.deleteItem(data.namespace, data.key);
                onDeleted();
              }}
            />
          </div>
        </>
      ) : null}
    </section>
  );
}

type Draft = { namespace: string; key: string; value: string };

function PutForm({
  client,
  draft,
  setDraft,
  onPut,
}: {
  client: Client;
  draft: Draft;
  setDraft: (d: Draft) => void;
  onPut: (s: Selected) => void;
}) {
  const [fieldErrors, setFieldErrors] = useState<string[]>([]);
  const [status, setStatus] = useState<string>();
  const { busy, error, run } = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setStatus(undefined);
    const namespace = splitNamespace(draft.namespace);
    const key = draft.key.trim();
    const problems: string[] = [];
    if (namespace.length === 0) problems.push("Namespace: required (labels separated by dots)");
    if (!key) problems.push("Key: required");
    const value = parseJsonField("Value", draft.value, true);
    if (!draft.value.trim()) problems.push("Value: required (a JSON object)");
    else if (value.error) problems.push(value.error);
    setFieldErrors(problems);
    if (problems.length) return;
    if (await run(() => client.store.putItem(namespace, key, value.value as Record<string, unknown>))) {
      setStatus(`Stored ${key} in ${joinNamespace(namespace)}.`);
      setDraft({ namespace: draft.namespace, key: "", value: "" });
      onPut({ namespace, key });
    }
  };
  return (
    <form className="card stacked" onSubmit={submit} aria-label="put item">
      <h3>Put an item</h3>
      <label>
        Namespace{" "}
        <input
          value={draft.namespace}
          placeholder="users.alice"
          onChange={(e) => setDraft({ ...draft, namespace: e.target.value })}
        />
      </label>
      <label>
        Key <input value={draft.key} onChange={(e) => setDraft({ ...draft, key: e.target.value })} />
      </label>
      <label>
        Value (JSON object)
        <textarea
          id="put-item-value"
          rows={6}
          value={draft.value}
          placeholder='{"text": "hello"}'
          spellCheck={false}
          onChange={(e) => setDraft({ ...draft, value: e.target.value })}
        />
      </label>
      <div className="actions">
        <button type="submit" disabled={busy}>
          Put item
        </button>
      </div>
      <FormMessages errors={fieldErrors} error={error} status={status} />
    </form>
  );
}

export function StorePage({ client }: { client: Client; credential: Credential }) {
  const route = useRoute();
  const namespace = route.id !== undefined ? splitNamespace(route.id) : [];
  const nsId = joinNamespace(namespace);
  // Bumped after a put or a delete: the lists and the item load again.
  const [version, setVersion] = useState(0);
  const [selected, setSelected] = useState<Selected>();
  const [draft, setDraft] = useState<Draft>({ namespace: nsId, key: "", value: "" });
  // Another namespace opened: the item shown goes, the form's namespace follows unless a key was typed.
  useEffect(() => {
    setSelected((s) => (s && under(s.namespace, namespace) ? s : undefined));
    setDraft((d) => (d.key || d.value ? d : { ...d, namespace: nsId }));
  }, [nsId]);
  return (
    <div className="console-page pages-split">
      <NamespaceList client={client} selected={nsId || undefined} version={version} />
      <div className="pages-main">
        {namespace.length ? (
          <ItemList
            client={client}
            namespace={namespace}
            version={version}
            selected={selected}
            onSelect={setSelected}
          />
        ) : (
          <p className="muted">Pick a namespace on the left, or put an item below.</p>
        )}
        {selected ? (
          <ItemView
            client={client}
            selected={selected}
            version={version}
            onEdit={(item) => {
              setDraft({
                namespace: joinNamespace(item.namespace),
                key: item.key,
                value: JSON.stringify(item.value, null, 2),
              });
              // To the form's value, to change it.
              requestAnimationFrame(() => document.getElementById("put-item-value")?.focus());
            }}
            onDeleted={() => {
              setSelected(undefined);
              setVersion((v) => v + 1);
            }}
          />
        ) : null}
        <PutForm
          client={client}
          draft={draft}
          setDraft={setDraft}
          onPut={(s) => {
            setSelected(s);
            setVersion((v) => v + 1);
            const id = joinNamespace(s.namespace);
            if (id !== nsId) location.hash = href({ page: "store", id });
          }}
        />
      </div>
    </div>
  );
}
