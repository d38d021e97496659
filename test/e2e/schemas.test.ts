// End-to-end tests of assistant schemas and subgraphs through the official SDK, in the official JS server's
// shapes: zod v3/v4 states (withLangGraph, registry, langgraph_type), Annotation types read from TypeScript.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { httpError } from "../helpers/http.ts";
import { ROOT, useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/schemas-project/langgraph.json") });

// Extracting types runs the TypeScript compiler over the graph and @langchain/*: seconds on a busy machine.
const SLOW = 180_000;

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";
const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";
const MESSAGE_REF = "#/definitions/BaseMessage<MessageStructure<MessageToolSet>,MessageType>";
const MESSAGES = { type: "array", items: { $ref: MESSAGE_REF } };

const schemas = (graphId: string) => hangar.client.assistants.getSchemas(graphId) as Promise<any>;

describe("zod states (runtime schemas)", () => {
  it("zod v4 with withLangGraph: partial update as state and input, output with required, context", async () => {
    const s = await schemas("zod4");
    expect(s.graph_id).toBe("zod4");
    const properties = {
      messages: { type: "array", items: {}, langgraph_type: "messages" },
      question: { type: "string" },
      score: { type: "number" },
      labels: { type: "array", items: { type: "string" } },
    };
    const update = { $schema: DRAFT_2020, type: "object", properties, additionalProperties: false };
    expect(s.state_schema).toEqual(update);
    expect(s.input_schema).toEqual(update);
    expect(s.output_schema).toEqual({ ...update, required: ["messages", "question", "labels"] });
    const context = {
      $schema: DRAFT_2020,
      type: "object",
      properties: { model: { type: "string" }, retries: { type: "number" } },
      required: ["model", "retries"],
      additionalProperties: false,
    };
    expect(s.config_schema).toEqual(context);
    expect(s.context_schema).toEqual(context);
  });

  it("zod v4 z.custom registered with MessagesZodMeta keeps langgraph_type", async () => {
    const s = await schemas("zod4_custom");
    expect(s.state_schema.properties).toEqual({
      messages: { langgraph_type: "messages" },
      summary: { type: "string" },
    });
    expect(s.output_schema.properties.messages).toEqual({ langgraph_type: "messages" });
    expect(s.config_schema).toBeUndefined();
  });

  it("zod v3 (zod/v3) with withLangGraph: draft-07, langgraph_type on messages, no config", async () => {
    const s = await schemas("zod3");
    const properties = {
      messages: { langgraph_type: "messages" },
      city: { type: "string" },
      days: { type: "number" },
    };
    expect(s.state_schema).toEqual({
      type: "object",
      properties,
      additionalProperties: false,
      $schema: DRAFT_07,
    });
    expect(s.input_schema).toEqual(s.state_schema);
    expect(s.output_schema).toEqual({ ...s.state_schema, required: ["city", "days"] });
    expect(Object.keys(s)).not.toContain("config_schema");
    expect(Object.keys(s)).not.toContain("context_schema");
  });
});

describe("Annotation states (TypeScript types)", () => {
  it(
    "state, input, output and config from the types, messages as BaseMessage arrays",
    async () => {
      const s = await schemas("annotated");
      expect(s.graph_id).toBe("annotated");
      expect(s.state_schema).toMatchObject({
        type: "object",
        $schema: DRAFT_07,
        properties: {
          messages: MESSAGES,
          topic: { type: "string" },
          count: { type: "number" },
          tags: { type: "array", items: { type: "string" } },
          done: { type: "boolean" },
        },
      });
      expect(Object.keys(s.state_schema.properties).sort()).toEqual([
        "count",
        "done",
        "messages",
        "tags",
        "topic",
      ]);
      expect(Object.keys(s.state_schema.definitions)).toContain(MESSAGE_REF.slice("#/definitions/".length));
      expect(s.state_schema).not.toHaveProperty("required");

      expect(s.input_schema.properties).toEqual({ messages: MESSAGES, topic: { type: "string" } });
      expect(s.output_schema.properties).toEqual({ messages: MESSAGES, count: { type: "number" } });
      const config = {
        type: "object",
        properties: { model: { type: "string" }, temperature: { type: "number" } },
        $schema: DRAFT_07,
      };
      expect(s.config_schema).toEqual(config);
      expect(s.context_schema).toEqual(config);
    },
    SLOW,
  );

  it(
    "answers the same again (cached) and by assistant UUID",
    async () => {
      const byGraph = await schemas("annotated");
      const [sys] = await hangar.client.assistants.search({ graphId: "annotated", limit: 1 });
      expect(await schemas(sys.assistant_id)).toEqual(byGraph);
    },
    SLOW,
  );

  it(
    "a graph whose type is erased falls back to its channel names, never a 500",
    async () => {
      const s = await schemas("untyped");
      expect(s.graph_id).toBe("untyped");
      expect(s.state_schema).toEqual({ title: "untyped_state", type: "object", properties: { value: {} } });
    },
    SLOW,
  );

  it("an unknown assistant is a 404", async () => {
    const err = await httpError(schemas(randomUUID()));
    expect(err.status).toBe(404);
  });
});

describe("subgraphs", () => {
  const nested = async () => (await hangar.client.assistants.search({ graphId: "nested", limit: 1 }))[0];
  const child = {
    type: "object",
    properties: { depth: { type: "number" }, note: { type: "string" } },
    $schema: DRAFT_07,
  };
  const grandchild = { type: "object", properties: { depth: { type: "number" } }, $schema: DRAFT_07 };

  it(
    "direct subgraphs by node name, with their own typed schemas",
    async () => {
      const subs = (await hangar.client.assistants.getSubgraphs((await nested()).assistant_id)) as any;
      expect(Object.keys(subs)).toEqual(["child"]);
      expect(subs.child.state_schema).toEqual(child);
      expect(subs.child.input_schema).toEqual(child);
      expect(subs.child.output_schema).toEqual(child);
      expect(subs.child.config_schema).toEqual({ type: "object", $schema: DRAFT_07 });
    },
    SLOW,
  );

  it(
    "recurse names nested subgraphs parent|child",
    async () => {
      const subs = (await hangar.client.assistants.getSubgraphs((await nested()).assistant_id, {
        recurse: true,
      })) as any;
      expect(Object.keys(subs).sort()).toEqual(["child", "child|grandchild"]);
      expect(subs["child|grandchild"].state_schema).toEqual(grandchild);
      expect(subs["child|grandchild"].output_schema).toEqual(grandchild);
    },
    SLOW,
  );

  it(
    "/subgraphs/{namespace} filters by namespace",
    async () => {
      const id = (await nested()).assistant_id;
      const one = (await hangar.client.assistants.getSubgraphs(id, { namespace: "child" })) as any;
      expect(Object.keys(one)).toEqual(["child"]);
      expect(one.child.state_schema).toEqual(child);
      const none = await hangar.client.assistants.getSubgraphs(id, { namespace: "nothing" });
      expect(none).toEqual({});
    },
    SLOW,
  );

  it("a graph without subgraphs answers {}", async () => {
    expect(await hangar.client.assistants.getSubgraphs("zod4")).toEqual({});
  });
});
