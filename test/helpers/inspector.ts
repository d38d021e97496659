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

/**
 * Bytes the process holds after a full collection: V8's heap in use plus memory outside it (Buffers, the
 * sockets' pending writes among them).
 */
export async function heldBytes(wsUrl: string): Promise<number> {
  const socket = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let next = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  socket.on("message", (raw) => {
    const msg = JSON.parse(String(raw)) as { id?: number; result?: unknown; error?: { message: string } };
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
  } finally {
    socket.close();
  }
}
