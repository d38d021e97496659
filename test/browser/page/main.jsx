// Browser test page: a chat and an approval (interrupt) flow with `useStream` from the official SDK, served
// from another origin than the Agent Server. Driven by test/browser/use-stream.test.ts; `?api=` is the server,
// `?graph=` the assistant, `?thread=` the thread the page keeps (set through onThreadId, read on reload).
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { useStream } from "@langchain/langgraph-sdk/react";

const params = new URLSearchParams(location.search);
const apiUrl = params.get("api");
const graph = params.get("graph") ?? "chat";

/** What the test reads: `messages` events per event stream, and the lengths the last AI message went through. */
window.__messageEvents = [];
window.__aiLengths = [];

/** fetch as the SDK's, counting the `messages` events of each event stream while the SDK reads it too. */
async function countingFetch(input, init) {
  const res = await fetch(input, init);
  if (!res.body || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return res;
  const [mine, theirs] = res.body.tee();
  const slot = window.__messageEvents.push(0) - 1;
  (async () => {
    const reader = mine.pipeThrough(new TextDecoderStream()).getReader();
    let carry = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const lines = (carry + value).split("\n");
      carry = lines.pop() ?? "";
      for (const line of lines) if (line.startsWith("event: messages")) window.__messageEvents[slot]++;
    }
  })().catch(() => {});
  return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const textOf = (m) =>
  typeof m.content === "string" ? m.content : (m.content ?? []).map((c) => c.text ?? "").join("");

function keepThreadInUrl(id) {
  const url = new URL(location.href);
  url.searchParams.set("thread", id);
  history.replaceState(null, "", url);
}

function App() {
  const [threadId, setThreadId] = useState(params.get("thread"));
  const [error, setError] = useState(null);
  const stream = useStream({
    apiUrl,
    assistantId: graph,
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      keepThreadInUrl(id);
    },
    onError: (e) => setError(String(e?.message ?? e)),
    callerOptions: { fetch: countingFetch, maxRetries: 0 },
    throttle: false,
  });
  const messages = graph === "chat" ? stream.messages : [];
  const lastAi = [...messages].reverse().find((m) => m.type === "ai");
  const lastAiLength = lastAi ? textOf(lastAi).length : undefined;
  useEffect(() => {
    const seen = window.__aiLengths;
    if (lastAiLength !== undefined && seen[seen.length - 1] !== lastAiLength) seen.push(lastAiLength);
  }, [lastAiLength]);

  return (
    <main data-testid="app" data-loading={String(stream.isLoading)} data-thread={threadId ?? ""}>
      {error && <p data-testid="error">{error}</p>}
      {graph === "chat" ? (
        <>
          <ul>
            {messages.map((m, i) => (
              <li key={m.id ?? i} data-testid="message" data-type={m.type}>
                {textOf(m)}
              </li>
            ))}
          </ul>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              const prompt = e.currentTarget.elements.prompt;
              stream.submit({ messages: [{ type: "human", content: prompt.value }] });
              prompt.value = "";
            }}
          >
            <input data-testid="prompt" name="prompt" />
            <button data-testid="send" type="submit">
              Send
            </button>
          </form>
        </>
      ) : (
        <>
          <button data-testid="start" onClick={() => stream.submit({ request: "a new roof" })}>
            Start
          </button>
          {stream.interrupt && (
            <div data-testid="interrupt">
              <p>{JSON.stringify(stream.interrupt.value)}</p>
              {/* useStream's documented resume, and what agent-chat-ui's Approve sends (input {} too). */}
              <button
                data-testid="resume"
                onClick={() => stream.submit(undefined, { command: { resume: "resumed" } })}
              >
                Resume
              </button>
              <button
                data-testid="approve"
                onClick={() => stream.submit({}, { command: { resume: "approved" } })}
              >
                Approve
              </button>
            </div>
          )}
          <p data-testid="decision">{stream.values?.decision ?? ""}</p>
        </>
      )}
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
