// What Hangar's container images hold where, shared by the images `hangar build` makes (src/cli/docker) and those
// the control plane assembles on `hangar build --base-only` for listeners (src/control-plane/runtime/local/image.ts).

/** Where Hangar lives in the image (`hangar` on PATH links to its bin). */
export const HANGAR_HOME = "/opt/hangar";
/** The data volume: the embedded backend's SQLite database. */
export const DATA_DIR = "/data";
/** The port of the official images. */
export const IMAGE_PORT = 8000;
/** The unprivileged user (and group) the server runs as. */
export const IMAGE_UID = 10001;

/**
 * The entry point of a project's image: `hangar serve`'s defaults for the project whose langgraph.json is
 * `config` (an absolute path in the image), then `--` and the command (src/cli/docker/entrypoint.ts).
 */
export function imageEntrypoint(config: string): string[] {
  return [
    "node",
    "--max-semi-space-size=4",
    `${HANGAR_HOME}/dist/cli/docker/entrypoint.js`,
    "--config",
    config,
    "--data-dir",
    DATA_DIR,
    "--host",
    "0.0.0.0",
    "--",
  ];
}
