// End-to-end tests of /assistants through the official SDK: system assistants, CRUD, versions, search, graph info.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { httpError, unique } from "../helpers/http.ts";
import { useHangar } from "../helpers/server.ts";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const GRAPH_IDS = ["chat", "research", "approval"];

const hangar = useHangar();

async function systemAssistant(graphId: string) {
  const found = await hangar.client.assistants.search({ graphId, limit: 100 });
  const sys = found.filter((a) => a.metadata?.created_by === "system");
  expect(sys).toHaveLength(1);
  return sys[0];
}

describe("system assistants", () => {
  it("exist once per graph, with created_by system", async () => {
    for (const graphId of GRAPH_IDS) {
      const sys = await systemAssistant(graphId);
      expect(sys.graph_id).toBe(graphId);
      expect(sys.assistant_id).toMatch(UUID_RE);
      expect(sys.metadata).toMatchObject({ created_by: "system" });
    }
  });

  it("can be fetched by graph id and by UUID", async () => {
    for (const graphId of GRAPH_IDS) {
      const sys = await systemAssistant(graphId);
      const byGraph = await hangar.client.assistants.get(graphId);
      expect(byGraph.assistant_id).toBe(sys.assistant_id);
      expect(byGraph.graph_id).toBe(graphId);
      const byId = await hangar.client.assistants.get(sys.assistant_id);
      expect(byId).toEqual(byGraph);
    }
  });
});

describe("create", () => {
  it("stores every field given and returns the assistant", async () => {
    const assistantId = randomUUID();
    const tag = unique("create");
    const created = await hangar.client.assistants.create({
      assistantId,
      graphId: "chat",
      config: { configurable: { temperature: 0.5 }, tags: ["t1"] },
      context: { user: "ada" },
      metadata: { tag, owner: "tests" },
      name: "Ada's helper",
      description: "Answers questions",
    });
    expect(created.assistant_id).toBe(assistantId);
    expect(created.graph_id).toBe("chat");
    expect(created.config).toMatchObject({ configurable: { temperature: 0.5 }, tags: ["t1"] });
    expect(created.context).toEqual({ user: "ada" });
    expect(created.metadata).toEqual({ tag, owner: "tests" });
    expect(created.name).toBe("Ada's helper");
    expect(created.description).toBe("Answers questions");
    expect(created.version).toBe(1);
    expect(Number.isNaN(Date.parse(created.created_at))).toBe(false);
    expect(Number.isNaN(Date.parse(created.updated_at))).toBe(false);

    const fetched = await hangar.client.assistants.get(assistantId);
    expect(fetched).toEqual(created);
  });

  it("generates a UUID when none is given", async () => {
    const tag = unique("gen");
    const a = await hangar.client.assistants.create({ graphId: "research", metadata: { tag } });
    expect(a.assistant_id).toMatch(UUID_RE);
    expect(a.graph_id).toBe("research");
    expect(a.name).toBe("Untitled");
    expect((await hangar.client.assistants.get(a.assistant_id)).metadata).toEqual({ tag });
  });

  it("if_exists raise (the default) answers 409 with a detail", async () => {
    const assistantId = randomUUID();
    await hangar.client.assistants.create({ assistantId, graphId: "chat", name: "first" });
    const err = await httpError(
      hangar.client.assistants.create({ assistantId, graphId: "chat", name: "second" }),
    );
    expect(err.status).toBe(409);
    expect(err.body.detail).toBeTruthy();
    const err2 = await httpError(
      hangar.client.assistants.create({ assistantId, graphId: "chat", name: "third", ifExists: "raise" }),
    );
    expect(err2.status).toBe(409);
    expect((await hangar.client.assistants.get(assistantId)).name).toBe("first");
  });

  it("if_exists do_nothing returns the existing assistant unchanged", async () => {
    const assistantId = randomUUID();
    const first = await hangar.client.assistants.create({
      assistantId,
      graphId: "chat",
      name: "original",
      metadata: { v: 1 },
    });
    const again = await hangar.client.assistants.create({
      assistantId,
      graphId: "research",
      name: "replacement",
      metadata: { v: 2 },
      ifExists: "do_nothing",
    });
    expect(again).toEqual(first);
    expect(await hangar.client.assistants.get(assistantId)).toEqual(first);
  });

  it("rejects an unknown graph_id with 404 or 422 and a detail", async () => {
    const tag = unique("nograph");
    const err = await httpError(
      hangar.client.assistants.create({ graphId: "no_such_graph_here", metadata: { tag } }),
    );
    expect([404, 422]).toContain(err.status);
    expect(err.body.detail).toBeTruthy();
    expect(await hangar.client.assistants.count({ metadata: { tag } })).toBe(0);
  });
});

describe("update and versions", () => {
  it("PATCH makes a new version; versions list newest first; latest switches the active one", async () => {
    const tag = unique("ver");
    const a = await hangar.client.assistants.create({
      graphId: "chat",
      name: "v1 name",
      config: { configurable: { mode: "one" } },
      metadata: { tag, keep: "yes" },
    });
    expect(a.version).toBe(1);

    const v2 = await hangar.client.assistants.update(a.assistant_id, {
      name: "v2 name",
      config: { configurable: { mode: "two" } },
      metadata: { added: 2 },
    });
    expect(v2.assistant_id).toBe(a.assistant_id);
    expect(v2.version).toBe(2);
    expect(v2.name).toBe("v2 name");
    expect(v2.graph_id).toBe("chat");
    expect(v2.config).toMatchObject({ configurable: { mode: "two" } });
    // Metadata is merged with the existing metadata.
    expect(v2.metadata).toMatchObject({ tag, keep: "yes", added: 2 });

    const got = await hangar.client.assistants.get(a.assistant_id);
    expect(got.version).toBe(2);
    expect(got.name).toBe("v2 name");

    const v3 = await hangar.client.assistants.update(a.assistant_id, { description: "third" });
    expect(v3.version).toBe(3);
    expect(v3.name).toBe("v2 name");
    expect(v3.description).toBe("third");

    const versions = await hangar.client.assistants.getVersions(a.assistant_id);
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(versions.map((v) => v.name)).toEqual(["v2 name", "v2 name", "v1 name"]);
    for (const v of versions) expect(v.assistant_id).toBe(a.assistant_id);
    expect(versions[2].config).toMatchObject({ configurable: { mode: "one" } });

    const limited = await hangar.client.assistants.getVersions(a.assistant_id, { limit: 1, offset: 1 });
    expect(limited.map((v) => v.version)).toEqual([2]);

    const back = await hangar.client.assistants.setLatest(a.assistant_id, 1);
    expect(back.version).toBe(1);
    expect(back.name).toBe("v1 name");
    const active = await hangar.client.assistants.get(a.assistant_id);
    expect(active.version).toBe(1);
    expect(active.name).toBe("v1 name");
    expect(active.config).toMatchObject({ configurable: { mode: "one" } });
    // Setting the latest version keeps every version.
    expect((await hangar.client.assistants.getVersions(a.assistant_id)).map((v) => v.version)).toEqual([
      3, 2, 1,
    ]);

    // A later PATCH gets a version number above every existing one.
    const v4 = await hangar.client.assistants.update(a.assistant_id, { name: "v4 name" });
    expect(v4.version).toBe(4);
  });

  it("setting an unknown version answers 404", async () => {
    const a = await hangar.client.assistants.create({ graphId: "chat", metadata: { tag: unique("badver") } });
    const err = await httpError(hangar.client.assistants.setLatest(a.assistant_id, 99));
    expect(err.status).toBe(404);
    expect(err.body.detail).toBeTruthy();
    expect((await hangar.client.assistants.get(a.assistant_id)).version).toBe(1);
  });

  it("PATCH of a missing assistant answers 404", async () => {
    const err = await httpError(hangar.client.assistants.update(randomUUID(), { name: "x" }));
    expect(err.status).toBe(404);
    expect(err.body.detail).toBeTruthy();
  });
});

describe("search and count", () => {
  const tag = unique("search");
  const ids: string[] = [];

  beforeAll(async () => {
    // Names sort as alpha < bravo < charlie < delta; graphs chat, chat, research, research.
    const specs = [
      { name: `alpha ${tag}`, graphId: "chat", i: 0 },
      { name: `bravo ${tag}`, graphId: "chat", i: 1 },
      { name: `charlie ${tag}`, graphId: "research", i: 2 },
      { name: `delta ${tag}`, graphId: "research", i: 3 },
    ];
    for (const s of specs) {
      const a = await hangar.client.assistants.create({
        graphId: s.graphId,
        name: s.name,
        metadata: { tag, i: s.i, even: s.i % 2 === 0 },
      });
      ids.push(a.assistant_id);
    }
  });

  it("filters by metadata (exact match on every pair)", async () => {
    const all = await hangar.client.assistants.search({ metadata: { tag }, limit: 100 });
    expect(new Set(all.map((a) => a.assistant_id))).toEqual(new Set(ids));
    const even = await hangar.client.assistants.search({ metadata: { tag, even: true }, limit: 100 });
    expect(new Set(even.map((a) => a.assistant_id))).toEqual(new Set([ids[0], ids[2]]));
  });

  it("filters by graph_id", async () => {
    const res = await hangar.client.assistants.search({ metadata: { tag }, graphId: "research", limit: 100 });
    expect(new Set(res.map((a) => a.assistant_id))).toEqual(new Set([ids[2], ids[3]]));
    for (const a of res) expect(a.graph_id).toBe("research");
  });

  it("filters by name, case-insensitive substring", async () => {
    const res = await hangar.client.assistants.search({ name: `BRAVO ${tag}`.toUpperCase(), limit: 100 });
    expect(res.map((a) => a.assistant_id)).toEqual([ids[1]]);
    const many = await hangar.client.assistants.search({ name: tag.slice(0, 20).toUpperCase(), limit: 100 });
    expect(new Set(many.map((a) => a.assistant_id))).toEqual(new Set(ids));
  });

  it("sorts by name both ways and pages with limit/offset", async () => {
    const asc = await hangar.client.assistants.search({
      metadata: { tag },
      sortBy: "name",
      sortOrder: "asc",
    });
    expect(asc.map((a) => a.metadata?.i)).toEqual([0, 1, 2, 3]);
    const desc = await hangar.client.assistants.search({
      metadata: { tag },
      sortBy: "name",
      sortOrder: "desc",
    });
    expect(desc.map((a) => a.metadata?.i)).toEqual([3, 2, 1, 0]);

    const page1 = await hangar.client.assistants.search({
      metadata: { tag },
      sortBy: "name",
      sortOrder: "asc",
      limit: 2,
      offset: 0,
    });
    const page2 = await hangar.client.assistants.search({
      metadata: { tag },
      sortBy: "name",
      sortOrder: "asc",
      limit: 2,
      offset: 2,
    });
    const page3 = await hangar.client.assistants.search({
      metadata: { tag },
      sortBy: "name",
      sortOrder: "asc",
      limit: 2,
      offset: 4,
    });
    expect(page1.map((a) => a.metadata?.i)).toEqual([0, 1]);
    expect(page2.map((a) => a.metadata?.i)).toEqual([2, 3]);
    expect(page3).toEqual([]);
  });

  it("sorts by graph_id and by assistant_id", async () => {
    const byGraph = await hangar.client.assistants.search({
      metadata: { tag },
      sortBy: "graph_id",
      sortOrder: "asc",
    });
    expect(byGraph.map((a) => a.graph_id)).toEqual(["chat", "chat", "research", "research"]);
    const byId = await hangar.client.assistants.search({
      metadata: { tag },
      sortBy: "assistant_id",
      sortOrder: "desc",
    });
    expect(byId.map((a) => a.assistant_id)).toEqual([...ids].sort().reverse());
  });

  it("returns only the selected fields", async () => {
    const res = await hangar.client.assistants.search({
      metadata: { tag },
      select: ["assistant_id", "name"],
    });
    expect(res).toHaveLength(4);
    for (const a of res) expect(Object.keys(a).sort()).toEqual(["assistant_id", "name"]);
  });

  it("counts with the same filters", async () => {
    expect(await hangar.client.assistants.count({ metadata: { tag } })).toBe(4);
    expect(await hangar.client.assistants.count({ metadata: { tag }, graphId: "chat" })).toBe(2);
    expect(await hangar.client.assistants.count({ metadata: { tag, even: false } })).toBe(2);
    expect(await hangar.client.assistants.count({ name: `charlie ${tag}` })).toBe(1);
    expect(await hangar.client.assistants.count({ metadata: { tag: unique("nothing") } })).toBe(0);
  });
});

describe("graph, schemas, subgraphs", () => {
  it("GET /graph returns nodes and edges", async () => {
    const g = (await hangar.client.assistants.getGraph("chat")) as any;
    const nodeIds = g.nodes.map((n: any) => n.id);
    expect(nodeIds).toEqual(expect.arrayContaining(["__start__", "agent", "__end__"]));
    const edges = g.edges.map((e: any) => `${e.source}->${e.target}`);
    expect(edges).toEqual(expect.arrayContaining(["__start__->agent", "agent->__end__"]));
  });

  it("GET /graph by assistant UUID equals GET by graph id", async () => {
    const sys = await systemAssistant("research");
    expect(await hangar.client.assistants.getGraph(sys.assistant_id)).toEqual(
      await hangar.client.assistants.getGraph("research"),
    );
  });

  it("xray expands subgraph nodes", async () => {
    const flat = (await hangar.client.assistants.getGraph("research")) as any;
    const flatIds: string[] = flat.nodes.map((n: any) => String(n.id));
    expect(flatIds).toEqual(expect.arrayContaining(["plan", "research", "write"]));
    expect(flatIds.some((id) => id.includes("search_web"))).toBe(false);

    const xray = (await hangar.client.assistants.getGraph("research", { xray: true })) as any;
    const xrayIds: string[] = xray.nodes.map((n: any) => String(n.id));
    for (const inner of ["search_web", "search_docs", "collect"]) {
      expect(xrayIds.some((id) => id.includes(inner))).toBe(true);
    }
    expect(xray.edges.length).toBeGreaterThan(flat.edges.length);
  });

  it("GET /schemas has graph_id and every schema key", async () => {
    for (const graphId of GRAPH_IDS) {
      const s = (await hangar.client.assistants.getSchemas(graphId)) as any;
      expect(s.graph_id).toBe(graphId);
      for (const key of ["input_schema", "output_schema", "state_schema", "config_schema"]) {
        expect(Object.keys(s)).toContain(key);
      }
      expect(typeof s.state_schema).toBe("object");
    }
  });

  it("GET /subgraphs lists the research subgraph", async () => {
    const research = await systemAssistant("research");
    const subs = (await hangar.client.assistants.getSubgraphs(research.assistant_id)) as Record<
      string,
      unknown
    >;
    expect(Object.keys(subs)).toContain("research");
    expect(typeof subs.research).toBe("object");

    const one = (await hangar.client.assistants.getSubgraphs(research.assistant_id, {
      namespace: "research",
    })) as Record<string, unknown>;
    expect(Object.keys(one)).toEqual(["research"]);

    const chat = await systemAssistant("chat");
    expect(await hangar.client.assistants.getSubgraphs(chat.assistant_id)).toEqual({});
  });
});

describe("delete", () => {
  it("DELETE then GET is 404; deleting again is 404", async () => {
    const a = await hangar.client.assistants.create({ graphId: "chat", metadata: { tag: unique("del") } });
    await hangar.client.assistants.delete(a.assistant_id);
    const err = await httpError(hangar.client.assistants.get(a.assistant_id));
    expect(err.status).toBe(404);
    expect(err.body.detail).toBeTruthy();
    const again = await httpError(hangar.client.assistants.delete(a.assistant_id));
    expect(again.status).toBe(404);
  });

  it("GET of an unknown UUID is 404 with a detail", async () => {
    const err = await httpError(hangar.client.assistants.get(randomUUID()));
    expect(err.status).toBe(404);
    expect(typeof err.body.detail).toBe("string");
  });
});
