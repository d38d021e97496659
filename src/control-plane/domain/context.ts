// What the control plane's API and services share: the store, the data directory, the public URL, wake-ups.
import type { Logger } from "../../lib/logger.js";
import type { CpStore } from "./types.js";

export interface CpContext {
  store: CpStore;
  /** The control plane's data directory (database, uploads, deployments' data). */
  dataDir: string;
  /** The URL clients reach the control plane at (known once it listens). */
  publicUrl(): string;
  /** Wakes the reconciler after a change (a no-op without one). */
  wake(): void;
  /** Largest accepted source tarball, in bytes. */
  maxUploadBytes: number;
  /** Directories local `repo_url`s may be under (HANGAR_CP_SOURCE_ROOTS, realpaths); none: refused. */
  sourceRoots: string[];
  /** Where images of built sources for listeners are pushed (HANGAR_CP_IMAGE_REGISTRY); unset: none are built. */
  imageRegistry?: string;
  /** The `.dockerconfigjson` listeners pull those images with (from HANGAR_CP_IMAGE_DOCKER_CONFIG), if any. */
  imagePullConfig?: string;
  log: Logger;
}
