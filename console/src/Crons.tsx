// The crons page (being written).
import type { Client } from "@langchain/langgraph-sdk";
import type { Credential } from "./api.ts";

export function CronsPage(_props: { client: Client; credential: Credential }) {
  return <p className="muted">Not yet.</p>;
}
