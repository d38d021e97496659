// Unit test of the loader of @kubernetes/client-node (an optional peer dependency): a missing package is named with
// how to install it; any other failure is passed on as it is.
import { describe, expect, it } from "vitest";
import { K8sClientMissingError, loadClientNode } from "../../src/control-plane/runtime/k8s/client-node.ts";

const failing = (err: Error & { code?: string }) => () => Promise.reject(err);

describe("loadClientNode", () => {
  it("loads the installed client", async () => {
    const k8s = await loadClientNode();
    expect(typeof k8s.KubeConfig).toBe("function");
  });

  it("names the package and how to install it when it is missing", async () => {
    const err = Object.assign(
      new Error("Cannot find package '@kubernetes/client-node' imported from /x.js"),
      {
        code: "ERR_MODULE_NOT_FOUND",
      },
    );
    const loading = loadClientNode(failing(err));
    await expect(loading).rejects.toBeInstanceOf(K8sClientMissingError);
    await expect(loading).rejects.toThrow("install @kubernetes/client-node to use the k8s runtime");
  });

  it("passes on another missing package or another error unchanged", async () => {
    const other = Object.assign(new Error("Cannot find package 'js-yaml' imported from /x.js"), {
      code: "ERR_MODULE_NOT_FOUND",
    });
    await expect(loadClientNode(failing(other))).rejects.toBe(other);
    const broken = new SyntaxError("Unexpected token");
    await expect(loadClientNode(failing(broken))).rejects.toBe(broken);
  });
});
