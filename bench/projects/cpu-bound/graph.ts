// A CPU-bound graph for bench/second-core.ts: one node hashes a buffer ROUNDS times (about 20 ms of one core here),
// synchronously, as a node parsing a document or scoring candidates would.
import { createHash } from "node:crypto";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const ROUNDS = Number(process.env.BENCH_HASH_ROUNDS ?? 3500);
const BLOCK = Buffer.alloc(4096, 7);

const State = Annotation.Root({ digest: Annotation<string> });

export const graph = new StateGraph(State)
  .addNode("hash", () => {
    let digest = BLOCK;
    for (let i = 0; i < ROUNDS; i++) digest = createHash("sha256").update(BLOCK).update(digest).digest();
    return { digest: digest.toString("hex") };
  })
  .addEdge(START, "hash")
  .addEdge("hash", END)
  .compile();
