// A2A's shapes made from and read into LangGraph's: message parts to graph input, run states to task states, the
// SDK's modules (loaded on first use), and a client of this server's own API with an A2A caller's headers.
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Client } from "@langchain/langgraph-sdk";
import type { Message, Part, TaskState as TaskStateT } from "@a2a-js/sdk";
import { callerHeaders } from "./inner.js";

/** The SDK's modules, loaded on the first A2A request (a server that never speaks A2A does not load them). */
export async function loadA2aSdk() {
  const [core, server, errors, legacy] = await Promise.all([
    import("@a2a-js/sdk"),
    import("@a2a-js/sdk/server"),
    import("@a2a-js/sdk/errors"),
    import("@a2a-js/sdk/compat/v0_3/server"),
  ]);
  return { core, server, errors, legacy };
}
export type Sdk = Awaited<ReturnType<typeof loadA2aSdk>>;

/** Headers of the A2A request, beside the transport's own, not passed on to the API requests made for it. */
const A2A_HEADERS = ["a2a-version", "a2a-extensions"];

/**
 * This server's own URL (the app's listening address) and a client of its API with the caller's headers. The SDK is
 * loaded on the first A2A request, as A2A's own (it costs a server ~0.2 s of CPU at start).
 */
export async function apiClient(app: FastifyInstance, req: FastifyRequest): Promise<Client> {
  const { Client } = await import("@langchain/langgraph-sdk");
  const addr = app.server.address();
  if (!addr || typeof addr !== "object") throw new Error("the server is not listening");
  const host = addr.address === "0.0.0.0" || addr.address === "::" ? "127.0.0.1" : addr.address;
  const apiUrl = `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}`;
  const headers = callerHeaders(req, A2A_HEADERS);
  return new Client({ apiUrl, defaultHeaders: headers, callerOptions: { maxRetries: 0 } });
}

/** The HTTP status of an error the SDK's client threw (undefined for another error). */
export const statusOf = (e: unknown): number | undefined => (e as { status?: number })?.status;

/** The text of a message's content (a string, or text blocks). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === "string" ? b : b?.type === "text" ? String(b.text ?? "") : ""))
      .join("");
  }
  return "";
}

export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});
export const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});

/** The graph input a message asks for: its text as a user message, its data parts merged in. */
export function inputOf(message: Message, sdkErrors: Sdk["errors"]): Record<string, unknown> {
  const texts: string[] = [];
  const input: Record<string, unknown> = {};
  for (const p of message.parts) {
    const c = p.content;
    if (c?.$case === "text") texts.push(c.value);
    else if (c?.$case === "data" && c.value && typeof c.value === "object" && !Array.isArray(c.value)) {
      Object.assign(input, c.value);
    } else {
      throw new sdkErrors.ContentTypeNotSupportedError("only text and data (object) parts are supported");
    }
  }
  if (texts.length) {
    const prior = Array.isArray(input.messages) ? input.messages : [];
    input.messages = [...prior, { role: "user", content: texts.join("\n") }];
  }
  return input;
}

/** The value a resumed interrupt gets from a message: its data, else its text. */
export function resumeOf(message: Message): unknown {
  const data = message.parts.find((p) => p.content?.$case === "data")?.content?.value;
  if (data !== undefined) return data;
  return message.parts
    .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .filter(Boolean)
    .join("\n");
}

export const agentMessage = (contextId: string, taskId: string, parts: Part[]): Message => ({
  messageId: randomUUID(),
  contextId,
  taskId,
  role: 2, // ROLE_AGENT
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** A2A's state for a run (and its thread's pending interrupts). */
export function stateOf(
  TaskState: Sdk["core"]["TaskState"],
  status: string,
  interrupted: boolean,
): TaskStateT {
  if (status === "pending") return TaskState.TASK_STATE_SUBMITTED;
  if (status === "running") return TaskState.TASK_STATE_WORKING;
  if (status === "success")
    return interrupted ? TaskState.TASK_STATE_INPUT_REQUIRED : TaskState.TASK_STATE_COMPLETED;
  if (status === "interrupted") return TaskState.TASK_STATE_CANCELED;
  return TaskState.TASK_STATE_FAILED;
}

export const TERMINAL = new Set(["success", "error", "timeout", "interrupted"]);
