// End-to-end: a server started as a successor (HANGAR_RECOVER_ON_START=false, what the control plane does
// while the previous revision still runs on the same data) fires no crons until the control plane tells it,
// with its token, that the predecessor is gone (POST /internal/recover).
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const TOKEN = "successor-test-token";
const hangar = useHangar({ env: { HANGAR_RECOVER_ON_START: "false", HANGAR_INTERNAL_TOKEN: TOKEN } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a successor revision", () => {
  it("starts its cron scheduler only after /internal/recover with the right token", async () => {
    const { client, server } = hangar;
    const cron = await client.crons.create("research", {
      schedule: "* * * * * *",
      input: { topic: "successor" },
      onRunCompleted: "keep",
    } as any);
    const fired = async () => (await client.threads.search({ metadata: { cron_id: cron.cron_id } })).length;
    await sleep(2_500);
    expect(await fired()).toBe(0);

    const recover = (token?: string) =>
      fetch(`${server.url}/internal/recover`, {
        method: "POST",
        headers: token ? { "x-hangar-internal-token": token } : {},
      });
    expect((await recover("wrong")).status).toBe(403);
    expect((await recover()).status).toBe(403);
    await sleep(1_500);
    expect(await fired()).toBe(0);

    const ok = await recover(TOKEN);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ recovered: expect.any(Number) });
    await waitFor("the cron to fire after recover", async () => ((await fired()) > 0 ? true : undefined));
    await client.crons.delete(cron.cron_id);
  });
});
