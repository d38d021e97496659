// What `hangar migrate` tells: progress with counts on stderr (a bar rewritten in place on a terminal, a line per
// tenth otherwise), and at the end a summary per kind of record and what could not be copied.
import { reason } from "./sides.js";

/** The counts of one kind of record. */
export interface Tally {
  kind: "assistants" | "threads" | "crons" | "store items";
  /** Records on the source. */
  source: number;
  /** Copied now (in a dry run: would be copied). */
  copied: number;
  /** Already on the target. */
  present: number;
  /** Their parts (assistant versions, thread checkpoints), copied and already there. */
  parts?: { name: string; copied: number; present: number };
  /** What could not be copied, one sentence each. */
  failures: string[];
  /** What was left out on purpose, or may differ. */
  notes: string[];
  /** A dry run: the counts are of what would be copied. */
  dryRun: boolean;
}

export const tally = (kind: Tally["kind"], dryRun: boolean, partName?: string): Tally => ({
  kind,
  dryRun,
  source: 0,
  copied: 0,
  present: 0,
  ...(partName ? { parts: { name: partName, copied: 0, present: 0 } } : {}),
  failures: [],
  notes: [],
});

const WIDTH = 24;

/** The progress of one kind of record over its `total` records. */
export class Progress {
  private done = 0;
  private lastTenth = -1;
  private readonly tty: boolean;

  constructor(
    private readonly t: Tally,
    private readonly total: number,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = !!out.isTTY;
    this.draw();
  }

  /** One more record handled. */
  tick(): void {
    this.done++;
    this.draw();
  }

  private counts(): string {
    const verb = this.t.dryRun ? "to copy" : "copied";
    const p = this.t.parts;
    const parts = p ? `, ${p.name} ${p.copied} ${verb}` : "";
    const failed = this.t.failures.length ? `, ${this.t.failures.length} failed` : "";
    return `${this.t.copied} ${verb}, ${this.t.present} already there${parts}${failed}`;
  }

  private draw(): void {
    const { done, total } = this;
    const line = `${this.t.kind.padEnd(11)} ${done}/${total} (${this.counts()})`;
    if (this.tty) {
      const filled = total ? Math.round((done / total) * WIDTH) : WIDTH;
      const bar = `[${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}]`;
      this.out.write(`\r\x1b[2K${bar} ${line}${done === total ? "\n" : ""}`);
      return;
    }
    const tenth = total ? Math.floor((done / total) * 10) : 10;
    if (tenth > this.lastTenth || done === total) {
      if (done === total && this.lastTenth === 11) return;
      this.lastTenth = done === total ? 11 : tenth;
      this.out.write(`${line}\n`);
    }
  }
}

/**
 * Copies each record with `copy`, showing progress: a record that fails is recorded as not copied, naming it
 * (`name`) and why, and the next one goes on.
 */
export async function copyEach<T>(
  t: Tally,
  records: T[],
  name: (r: T) => string,
  copy: (r: T) => Promise<void>,
): Promise<Tally> {
  t.source = records.length;
  if (!records.length) return t;
  const progress = new Progress(t, records.length);
  for (const r of records) {
    try {
      await copy(r);
    } catch (e) {
      t.failures.push(`${name(r)}: ${reason(e)}`);
    }
    progress.tick();
  }
  return t;
}

/** The summary lines: one per kind, then what could not be copied and the notes. */
export function summary(tallies: Tally[], dryRun: boolean): string[] {
  const verb = dryRun ? "to copy" : "copied";
  const lines = [dryRun ? "Dry run: nothing was written. What would be copied:" : "Summary:"];
  for (const t of tallies) {
    const p = t.parts ? `; ${t.parts.name}: ${t.parts.copied} ${verb}, ${t.parts.present} already there` : "";
    const failed = t.failures.length ? `, ${t.failures.length} not copied` : "";
    lines.push(
      `  ${t.kind.padEnd(11)} ${t.source} on the source: ${t.copied} ${verb}, ${t.present} already there${failed}${p}`,
    );
  }
  const failures = tallies.flatMap((t) => t.failures);
  if (failures.length) {
    lines.push(`Not copied (${failures.length}):`);
    for (const f of failures) lines.push(`  - ${f}`);
  }
  const notes = tallies.flatMap((t) => t.notes);
  if (notes.length) {
    lines.push("Notes:");
    for (const n of notes) lines.push(`  - ${n}`);
  }
  return lines;
}
