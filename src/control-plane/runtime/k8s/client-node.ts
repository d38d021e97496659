// @kubernetes/client-node, an optional peer dependency only the k8s runtime (`hangar listener`) needs: imported
// dynamically when a module of runtime/k8s/ is first loaded, with a clear error when it is not installed.
import type * as ClientNode from "@kubernetes/client-node";
import { ConfigError } from "../../../lib/errors.js";

export type ClientNodeModule = typeof ClientNode;

/** @kubernetes/client-node is not installed: the message says how to get it. */
export class K8sClientMissingError extends ConfigError {}

const PACKAGE = "@kubernetes/client-node";

/** Imports the Kubernetes client (`load` is the import, replaceable in tests); a missing package is named. */
export async function loadClientNode(
  load: () => Promise<ClientNodeModule> = () => import("@kubernetes/client-node"),
): Promise<ClientNodeModule> {
  try {
    return await load();
  } catch (e) {
    const err = e as { code?: unknown; message?: unknown };
    const missing =
      (err?.code === "ERR_MODULE_NOT_FOUND" || err?.code === "MODULE_NOT_FOUND") &&
      String(err.message).includes(PACKAGE);
    if (!missing) throw e;
    throw new K8sClientMissingError(
      `install ${PACKAGE} to use the k8s runtime (npm install ${PACKAGE}): it is an optional peer dependency of ` +
        "Hangar, needed only by `hangar listener`",
    );
  }
}

/** The client module, loaded once by the first import of this file (top-level await). */
export const k8s: ClientNodeModule = await loadClientNode();
