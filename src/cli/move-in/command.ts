// `hangar migrate --from URL --to URL`: copies assistants (every version), threads with their checkpoint history,
// crons and store items from any Agent Server (read through its public API) into a Hangar server, in that order,
// skipping what the target already has. Progress on stderr, the summary on stdout; exit 1 if anything was not copied.
import { copyAssistants } from "./assistants.js";
import { copyCrons } from "./crons.js";
import { summary, type Tally } from "./report.js";
import { MoveInError, reason, request, sideOf, statusOf, stepFailure, type Side } from "./sides.js";
import { copyStore } from "./store.js";
import { copyThreads } from "./threads.js";

export interface MigrateOptions {
  from?: string;
  to?: string;
  fromApiKey?: string;
  toApiKey?: string;
  fromHeader?: string[];
  toHeader?: string[];
  dryRun?: boolean;
  json?: boolean;
}

/** What a server says of itself (GET /info, open on every Agent Server); null when it does not say. */
async function infoOf(side: Side): Promise<Record<string, unknown> | null> {
  let res: Response;
  try {
    res = await fetch(`${side.url}/info`, { headers: side.headers });
  } catch (e) {
    const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    throw new MoveInError(`the ${side.role} ${side.url} cannot be reached (${cause})`);
  }
  if (!res.ok) return null;
  return ((await res.json().catch(() => null)) as Record<string, unknown> | null) ?? null;
}

/** Refuses at once a side whose credentials the server does not take (rather than a failure per record). */
async function checkAccess(side: Side): Promise<void> {
  try {
    await request(side, "POST", "/assistants/search", { limit: 1 });
  } catch (e) {
    const status = statusOf(e);
    if (status === 401 || status === 403) throw stepFailure(side, "reading the assistants", e);
  }
}

const describe = (info: Record<string, unknown> | null) =>
  info?.server === "hangar"
    ? `Hangar ${String(info.version ?? "")}`.trim()
    : info?.version
      ? `an Agent Server ${String(info.version)}`
      : "an Agent Server";

function jsonOf(tallies: Tally[], dryRun: boolean, from: Side, to: Side, fatal?: string) {
  const kinds = Object.fromEntries(
    tallies.map((t) => [
      t.kind.replace(" ", "_"),
      {
        source: t.source,
        copied: t.copied,
        present: t.present,
        ...(t.parts ? { [t.parts.name]: { copied: t.parts.copied, present: t.parts.present } } : {}),
        failures: t.failures,
        notes: t.notes,
      },
    ]),
  );
  return { dry_run: dryRun, from: from.url, to: to.url, ...kinds, ...(fatal ? { error: fatal } : {}) };
}

export async function runMigrate(opts: MigrateOptions): Promise<number> {
  let from: Side;
  let to: Side;
  try {
    from = sideOf("from", { url: opts.from, apiKey: opts.fromApiKey, header: opts.fromHeader });
    to = sideOf("to", { url: opts.to, apiKey: opts.toApiKey, header: opts.toHeader });
    if (from.url === to.url) throw new MoveInError("--from and --to name the same server", 2);
  } catch (e) {
    console.error(`hangar migrate: ${reason(e)}`);
    return e instanceof MoveInError ? e.exitCode : 1;
  }
  const dryRun = !!opts.dryRun;
  const tallies: Tally[] = [];
  let fatal: string | undefined;
  try {
    const [fromInfo, toInfo] = await Promise.all([infoOf(from), infoOf(to)]);
    await Promise.all([checkAccess(from), checkAccess(to)]);
    const targetIsHangar = toInfo?.server === "hangar";
    process.stderr.write(
      `hangar migrate${dryRun ? " (dry run)" : ""}: from ${from.url} (${describe(fromInfo)}) to ${to.url} (${describe(toInfo)})\n`,
    );
    if (!targetIsHangar) {
      process.stderr.write(
        "the target is not Hangar: threads are created without their checkpoint history (Hangar's import route)\n",
      );
    }
    // Assistants before the threads and crons that name them, threads before the crons that run on them.
    tallies.push(await copyAssistants(from, to, dryRun));
    tallies.push(await copyThreads(from, to, { dryRun, targetIsHangar }));
    tallies.push(await copyCrons(from, to, dryRun));
    tallies.push(await copyStore(from, to, dryRun));
  } catch (e) {
    fatal = reason(e);
  }
  if (opts.json) console.log(JSON.stringify(jsonOf(tallies, dryRun, from, to, fatal), null, 2));
  else if (tallies.length) for (const line of summary(tallies, dryRun)) console.log(line);
  if (fatal) {
    console.error(`hangar migrate: ${fatal}`);
    return 1;
  }
  return tallies.some((t) => t.failures.length) ? 1 : 0;
}
