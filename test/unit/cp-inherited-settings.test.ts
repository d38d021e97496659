// The settings a control plane passes on to the Agent Servers it starts (src/control-plane/runtime/local/runtime.ts):
// its own HANGAR_GRAPH_THREADS and HANGAR_SCHEMAS_AHEAD when its operator set them, nothing else of its environment.
import { describe, expect, it } from "vitest";
import { inheritedSettings } from "../../src/control-plane/runtime/local/runtime.ts";

describe("a control plane's settings its deployments inherit", () => {
  it("are its graph threads and its schemas ahead, when set", () => {
    expect(
      inheritedSettings({
        HANGAR_GRAPH_THREADS: "1",
        HANGAR_SCHEMAS_AHEAD: "false",
        HANGAR_CP_API_KEYS: "secret",
        DATABASE_URL: "postgres://cp",
        LOG_LEVEL: "debug",
      }),
    ).toEqual({ HANGAR_GRAPH_THREADS: "1", HANGAR_SCHEMAS_AHEAD: "false" });
  });

  it("are nothing when its operator set neither (the deployments' own defaults apply)", () => {
    expect(inheritedSettings({ PATH: "/usr/bin", HANGAR_SCHEMAS_AHEAD: "" })).toEqual({});
  });
});
