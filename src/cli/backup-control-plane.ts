// `hangar backup --control-plane` and `hangar restore --control-plane`: the control plane's data directory as a
// directory of the same layout: its store (control-plane.db), the key of deployments' secrets (secret.key, when
// HANGAR_CP_SECRET_KEY is not used), uploaded sources (uploads/), the sandbox's uid table, and the embedded data
// of each deployment (deployments/<id>/data/hangar.sqlite). Builds are left out: a missing build is built again.
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { KEY_FILE } from "../control-plane/domain/secrets-crypto.js";
import { CP_DB_FILE } from "../control-plane/store/sqlite.js";
import { copyDatabase, isSqliteFile } from "../lib/db/sqlite-backup.js";
import { DB_FILE } from "../storage/sqlite/db.js";
import {
  checkHangarDatabase,
  refuseInUse,
  restoreDatabase,
  type BackupOptions,
  type RestoreOptions,
} from "./backup.js";
import { BackupError, progressOf, sizeOf } from "./backup-output.js";
import { DEFAULT_DATA_DIR } from "./cp-store.js";

/** Files copied as they are (not databases); absent ones are skipped. */
const PLAIN = ["sandbox-uids.json"];
const UPLOADS = "uploads";
const DEPLOYMENTS = "deployments";

/** The deployments' embedded databases under `dir`: `deployments/<id>/data/hangar.sqlite`, relative to `dir`. */
function deploymentDatabases(dir: string): string[] {
  const root = join(dir, DEPLOYMENTS);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .map((id) => join(DEPLOYMENTS, id, "data", DB_FILE))
    .filter((rel) => isSqliteFile(join(dir, rel)));
}

function cpDataDir(opts: { dataDir?: string }): string {
  return resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
}

/** Refuses a target directory that holds anything, unless `force`. */
function refuseNonEmpty(dir: string, force: boolean | undefined, what: string): void {
  if (existsSync(dir) && readdirSync(dir).length && !force) {
    throw new BackupError(`${what} ${dir} is not empty; pass --force to replace its data`);
  }
}

export async function backupControlPlane(opts: BackupOptions): Promise<void> {
  const dataDir = cpDataDir(opts);
  if (!existsSync(dataDir)) throw new BackupError(`the data directory ${dataDir} does not exist`);
  const store = join(dataDir, CP_DB_FILE);
  if (!isSqliteFile(store)) {
    throw new BackupError(
      `${dataDir} is not a control plane's data directory (it has no ${CP_DB_FILE}); a control plane on ` +
        "PostgreSQL (DATABASE_URL) is backed up with pg_dump of its schema, and its data directory's secret.key, " +
        'uploads/ and deployments\' data beside: see docs/backup.md, "Control plane on PostgreSQL"',
    );
  }
  const out = resolve(opts.out);
  refuseNonEmpty(out, opts.force, "--out");
  mkdirSync(out, { recursive: true });
  let bytes = (await copyDatabase(store, join(out, CP_DB_FILE), progressOf(`copying ${CP_DB_FILE}`))).bytes;
  const databases = deploymentDatabases(dataDir);
  for (const rel of databases) {
    checkHangarDatabase(join(dataDir, rel), "a deployment's data");
    mkdirSync(join(out, rel, ".."), { recursive: true });
    bytes += (await copyDatabase(join(dataDir, rel), join(out, rel), progressOf(`copying ${rel}`))).bytes;
  }
  const key = existsSync(join(dataDir, KEY_FILE));
  if (key) {
    copyFileSync(join(dataDir, KEY_FILE), join(out, KEY_FILE));
    chmodSync(join(out, KEY_FILE), 0o600);
  }
  for (const f of PLAIN) if (existsSync(join(dataDir, f))) copyFileSync(join(dataDir, f), join(out, f));
  if (existsSync(join(dataDir, UPLOADS)))
    cpSync(join(dataDir, UPLOADS), join(out, UPLOADS), { recursive: true });
  console.log(`backup of the control plane's ${dataDir} written to ${out}`);
  console.log(
    `  ${CP_DB_FILE}, ${databases.length} deployments' embedded data, ${sizeOf(bytes)} of databases`,
  );
  console.log(
    key
      ? `  ${KEY_FILE} (the key of deployments' secrets: keep the backup as secret as the key)`
      : `  no ${KEY_FILE}: the secrets' key is HANGAR_CP_SECRET_KEY; keep it with the backup`,
  );
}

export async function restoreControlPlane(opts: RestoreOptions): Promise<void> {
  const from = resolve(opts.from);
  if (!isSqliteFile(join(from, CP_DB_FILE))) {
    throw new BackupError(`${from} is not a backup of a control plane (it has no ${CP_DB_FILE})`);
  }
  const dataDir = cpDataDir(opts);
  const databases = deploymentDatabases(from);
  // Nothing is replaced while the control plane or a deployment's server still has its database open.
  refuseInUse(join(dataDir, CP_DB_FILE), `the data directory ${dataDir}`);
  for (const rel of deploymentDatabases(dataDir)) refuseInUse(join(dataDir, rel), `${join(dataDir, rel)}`);
  refuseNonEmpty(dataDir, opts.force, "the data directory");
  for (const rel of databases) checkHangarDatabase(join(from, rel), "the backup");
  await restoreDatabase(join(from, CP_DB_FILE), dataDir, CP_DB_FILE, true, `restoring ${CP_DB_FILE}`);
  for (const rel of databases) {
    const dir = join(dataDir, rel, "..");
    await restoreDatabase(join(from, rel), dir, DB_FILE, true, `restoring ${rel}`);
  }
  const key = existsSync(join(from, KEY_FILE));
  if (key) {
    copyFileSync(join(from, KEY_FILE), join(dataDir, KEY_FILE));
    chmodSync(join(dataDir, KEY_FILE), 0o600);
  }
  for (const f of PLAIN) if (existsSync(join(from, f))) copyFileSync(join(from, f), join(dataDir, f));
  if (existsSync(join(from, UPLOADS))) {
    rmSync(join(dataDir, UPLOADS), { recursive: true, force: true });
    cpSync(join(from, UPLOADS), join(dataDir, UPLOADS), { recursive: true });
  }
  console.log(`restored the control plane's data from ${from} into ${dataDir}`);
  console.log(`  ${CP_DB_FILE} and ${databases.length} deployments' embedded data`);
  if (!key)
    console.log(`  no ${KEY_FILE} in the backup: start the control plane with its HANGAR_CP_SECRET_KEY`);
  console.log("  revisions whose builds are missing are built again when the control plane starts");
}
