// Browser test page for protocol v2: the official SDK's ThreadStream (`client.threads.stream`), run in the page
// over the browser's own WebSocket (the SDK's default factory, the global `WebSocket`) or over SSE (the page's
// fetch), against an Agent Server on another origin (`?api=`). Driven by test/browser/protocol-v2.test.ts
// through `window.protocolPage`; what the SDK delivered is reported back by `report()`.
import { Client, type ThreadStream } from "@langchain/langgraph-sdk";

/** A protocol event as the page's subscription received it. */
export interface SeenEvent {
  method: string;
  seq?: number;
  namespace: string[];
  data: any;
}

/** What the page saw so far. */
export interface Report {
  threadId?: string;
  events: SeenEvent[];
  /** Failures reported by the SDK (ThreadStream.onError, a broken subscription loop). */
  errors: string[];
  interrupted: boolean;
  interrupts: { interruptId: string; payload: unknown; namespace: string[] }[];
}

export type Transport = "websocket" | "sse";

const apiUrl = new URLSearchParams(location.search).get("api") ?? "";
let thread: ThreadStream | undefined;
const events: SeenEvent[] = [];
const errors: string[] = [];

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

function current(): ThreadStream {
  if (!thread) throw new Error("no ThreadStream: call open() first");
  return thread;
}

const protocolPage = {
  /**
   * Opens a ThreadStream for `assistantId` on a new thread over `transport`, no retries (a failure surfaces at
   * once), and subscribes to the root's lifecycle, values and input events; returns the thread id.
   */
  async open(transport: Transport, assistantId: string): Promise<string> {
    const client = new Client({ apiUrl, callerOptions: { maxRetries: 0 } });
    thread = client.threads.stream({ assistantId, transport, maxReconnectAttempts: 0 });
    thread.onError((e) => errors.push(`ThreadStream: ${message(e)}`));
    const subscription = await thread.subscribe(["lifecycle", "values", "input"]);
    void (async () => {
      // The SDK pauses a subscription after the root's terminal lifecycle (here `interrupted`), ending `for
      // await`, and resumes it for the next run (`input.respond`): read on across runs as its own watcher does.
      for (;;) {
        for await (const e of subscription) {
          const params = (e as any).params ?? {};
          events.push({
            method: e.method,
            seq: (e as any).seq,
            namespace: params.namespace ?? [],
            data: params.data,
          });
        }
        if (!subscription.isPaused) break;
        await subscription.waitForResume();
      }
    })().catch((e) => errors.push(`subscription: ${message(e)}`));
    return thread.threadId;
  },

  /** `thread.run.start`: the run's id (optional in the protocol's RunResult). */
  async start(input: unknown): Promise<string | undefined> {
    return (await current().run.start({ input })).run_id;
  },

  /** Answers the last pending interrupt with `thread.input.respond`. */
  async respond(response: unknown): Promise<void> {
    const t = current();
    const pending = t.interrupts.at(-1);
    if (!pending) throw new Error("no interrupt to answer");
    await t.input.respond({ interrupt_id: pending.interruptId, response, namespace: pending.namespace });
  },

  /** The thread's values through the protocol's `state.get`. */
  async state(): Promise<unknown> {
    return (await current().state.get({ namespace: [] })).values;
  },

  report(): Report {
    return JSON.parse(
      JSON.stringify({
        threadId: thread?.threadId,
        events,
        errors,
        interrupted: thread?.interrupted ?? false,
        interrupts: thread?.interrupts ?? [],
      }),
    );
  },

  async close(): Promise<void> {
    await thread?.close();
  },
};

export type ProtocolPage = typeof protocolPage;

(window as unknown as { protocolPage: ProtocolPage }).protocolPage = protocolPage;
document.body.dataset.ready = "true";
