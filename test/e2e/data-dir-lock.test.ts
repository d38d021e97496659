// One server per data directory (src/storage/sqlite/dir-lock.ts): a second server on a directory another one uses
// refuses to start, naming it, and leaves the first serving with its data; the directory is free again once the
// first stops, or is killed (the operating system drops its lock). A successor the control plane starts beside its
// predecessor (HANGAR_RECOVER_ON_START=false) shares it. Embedded backend only (vitest.config.ts: a scale-out
// server has no data directory).
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDir, noRetryClient, startHangar, tempDir, type HangarProcess } from "../helpers/server.ts";

const dataDir = tempDir();
const started: HangarProcess[] = [];

async function start(opts: Parameters<typeof startHangar>[0] = {}): Promise<HangarProcess> {
  const server = await startHangar({ dataDir, ...opts });
  started.push(server);
  return server;
}

afterAll(async () => {
  for (const s of started) await s.stop().catch(() => {});
  cleanupDir(dataDir);
});

const IN_USE = `the data directory ${dataDir} is in use by another Hangar server`;

describe("a data directory in use", () => {
  it("a second server in the same process refuses it; the first keeps serving; free once the first stops", async () => {
    const first = await start();
    const { thread_id } = await noRetryClient(first.url).threads.create({ metadata: { mine: true } });
    await expect(startHangar({ dataDir })).rejects.toThrow(IN_USE);
    expect((await fetch(`${first.url}/ok`)).status).toBe(200);
    expect((await noRetryClient(first.url).threads.get(thread_id)).metadata).toEqual({ mine: true });
    await first.stop();
    const next = await start();
    expect((await noRetryClient(next.url).threads.get(thread_id)).metadata).toEqual({ mine: true });
    await next.stop();
  });

  it("`hangar dev` in another process exits 1 naming it; once the first is killed, the next one starts", async () => {
    const first = await start({ process: true });
    const refused = startHangar({ dataDir, process: true });
    await expect(refused).rejects.toThrow(/hangar exited with 1 before listening/);
    await expect(refused).rejects.toThrow(IN_USE);
    await first.kill();
    const next = await start({ process: true });
    expect((await fetch(`${next.url}/ok`)).status).toBe(200);
    await next.stop();
  });

  it("a successor started beside its predecessor (HANGAR_RECOVER_ON_START=false) shares it", async () => {
    const first = await start();
    const successor = await start({ env: { HANGAR_RECOVER_ON_START: "false" } });
    expect((await fetch(`${successor.url}/ok`)).status).toBe(200);
    await successor.stop();
    await first.stop();
  });
});
