// End-to-end: the `http` section of langgraph.json: the project's own app, CORS, and disabled route groups.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/http-project/langgraph.json") });

describe("http config", () => {
  it("serves the project's own routes beside the API", async () => {
    const url = hangar.server.url;
    expect(await (await fetch(`${url}/custom/hello`)).json()).toEqual({ hello: "world", method: "GET" });
    const echo = await fetch(`${url}/custom/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ a: 1 }),
    });
    expect(await echo.json()).toEqual({ got: { a: 1 } });
    expect((await hangar.client.threads.create()).status).toBe("idle");
  });

  it("answers CORS preflights for the allowed origin only", async () => {
    const url = hangar.server.url;
    const pre = (origin: string) =>
      fetch(`${url}/threads`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST" },
      });
    const ok = await pre("https://app.example");
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await pre("https://evil.example");
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("disable_store removes the store routes", async () => {
    const res = await fetch(`${hangar.server.url}/store/items/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(404);
  });
});
