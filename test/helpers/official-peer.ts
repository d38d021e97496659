// The official dev server as a peer of the tests (started once per run by test/helpers/official-peer-setup.ts): its
// URL once it answers, and an SDK client for it. Waits are on conditions (its /ok, the warm-up's marker file), with
// its output in the message when it fails.
import { existsSync, readFileSync } from "node:fs";
import { Client } from "@langchain/langgraph-sdk";
import { inject } from "vitest";
import type { PeerInfo, PeerName } from "./official-peer-setup.ts";
import { waitFor } from "./wait.ts";

function info(name: PeerName): PeerInfo {
  const peers = inject("officialPeers");
  if (!peers)
    throw new Error(
      "the official dev server is not started: test/helpers/official-peer-setup.ts is a globalSetup",
    );
  return peers[name];
}

/**
 * Bound of the waits on the peer: its start and first schema extraction take minutes of CPU on a busy 2-core
 * machine (two minutes seen). Reached only when it fails, before the hook's own bound (vitest.config.ts).
 */
const PEER_BOUND_MS = 600_000;

const tail = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").slice(-4000) : "(no output)");

/**
 * The URL of the official dev server `name` once it answers /ok (whatever its status); with `schemas`, once the schemas of its graphs
 * have been extracted too (the warm-up of the setup).
 */
export async function officialPeer(name: PeerName, opts: { schemas?: boolean } = {}): Promise<string> {
  const peer = info(name);
  const what = () => `the official dev server "${name}" at ${peer.url}; its output:\n${tail(peer.log)}`;
  // Any answer: under custom auth the dev server asks for credentials on /ok too.
  await waitFor(what, async () => !!(await fetch(`${peer.url}/ok`).catch(() => undefined)), PEER_BOUND_MS);
  if (opts.schemas) {
    const warm = await waitFor(
      () => `the schemas of ${what()}`,
      () =>
        existsSync(peer.warm) &&
        (JSON.parse(readFileSync(peer.warm, "utf8")) as { ok?: true; error?: string }),
      PEER_BOUND_MS,
    );
    if (warm.error) throw new Error(`warming up ${what()}\nfailed: ${warm.error}`);
  }
  return peer.url;
}

/** An SDK client of the peer that sends no API key (of the environment) and does not retry. */
export function peerClient(url: string, headers?: Record<string, string>): Client {
  return new Client({ apiUrl: url, apiKey: null, defaultHeaders: headers, callerOptions: { maxRetries: 0 } });
}
