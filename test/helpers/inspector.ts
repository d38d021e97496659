// The memory a server process holds, read through its inspector (the process started with
// `nodeFlags: ["--inspect=127.0.0.1:0"]`): a full garbage collection first, so what is measured is what the
// process keeps, not garbage a busy machine has not collected yet (resident memory is that noisy).
import WebSocket from "ws";

/** The inspector's WebSocket URL, from the "Debugger listening on ws://…" line of the process's output. */
export function inspectorUrl(output: string): string {
  const m = /Debugger listening on (ws:\/\/\S+)/.exec(output);
  if (!m) throw new Error(`the process has no inspector (start it with --inspect=127.0.0.1:0):\n${output}`);
  return m[1];
}

/** A session on a process's inspector: `send` a DevTools Protocol command; `on` its events. */
async function session<T>(
  wsUrl: string,
  body: (
    send: (method: string, params?: object) => Promise<unknown>,
    on: (event: string, fn: (params: any) => void) => void,
  ) => Promise<T>,
): Promise<T> {
  const socket = new WebSocket(wsUrl, { maxPayload: 2 ** 30 });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let next = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const handlers = new Map<string, (params: any) => void>();
  socket.on("message", (raw) => {
    const msg = JSON.parse(String(raw)) as {
      id?: number;
      method?: string;
      params?: unknown;
      result?: unknown;
      error?: { message: string };
    };
    if (msg.method) handlers.get(msg.method)?.(msg.params);
    const call = msg.id === undefined ? undefined : pending.get(msg.id);
    if (!call) return;
    pending.delete(msg.id!);
    if (msg.error) call.reject(new Error(msg.error.message));
    else call.resolve(msg.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    return await body(send, (event, fn) => handlers.set(event, fn));
  } finally {
    socket.close();
  }
}

/**
 * Bytes the process holds after a full collection: V8's heap in use plus memory outside it (Buffers, the
 * sockets' pending writes among them).
 */
export function heldBytes(wsUrl: string): Promise<number> {
  return session(wsUrl, async (send) => {
    // Twice: what a first collection frees can let finalizers release more.
    await send("HeapProfiler.collectGarbage");
    await send("HeapProfiler.collectGarbage");
    const result = (await send("Runtime.evaluate", {
      expression: "(() => { const m = process.memoryUsage(); return m.heapUsed + m.external; })()",
      returnByValue: true,
    })) as { result: { value?: number }; exceptionDetails?: unknown };
    if (typeof result.result.value !== "number") {
      throw new Error(`the inspector did not answer the process's memory: ${JSON.stringify(result)}`);
    }
    return result.result.value;
  });
}

/** Forces two full collections (what is resident after it is what the process keeps, and its allocator's). */
export function collectGarbage(wsUrl: string): Promise<void> {
  return session(wsUrl, async (send) => {
    await send("HeapProfiler.collectGarbage");
    await send("HeapProfiler.collectGarbage");
  });
}

/**
 * The text of every string the process's heap still reaches, from a heap snapshot (which collects garbage
 * first): what it retains can be searched, e.g. for the ids of threads it served.
 */
export function heapStrings(wsUrl: string): Promise<string[]> {
  return session(wsUrl, async (send, on) => {
    const chunks: string[] = [];
    on("HeapProfiler.addHeapSnapshotChunk", (p: { chunk: string }) => chunks.push(p.chunk));
    await send("HeapProfiler.collectGarbage");
    await send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    return (JSON.parse(chunks.join("")) as { strings: string[] }).strings;
  });
}
