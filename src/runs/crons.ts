// The cron scheduler: finds due crons, claims each due date once (compare-and-set in storage), and creates
// the run: on the cron's thread, or on a new thread per execution (deleted after the run unless "keep").
import { withEncryptionUser } from "../lib/encryption-context.js";
import { runOwner } from "./kwargs.js";
import { CronExpressionParser } from "cron-parser";
import { invalidInput } from "../lib/errors.js";
import { RunCreateStateful } from "./schemas.js";
import type { Logger } from "../lib/logger.js";
import type { Cron, Storage } from "../storage/types.js";
import type { Broker } from "../streams/channel.js";
import type { RunService } from "./service.js";
import { randomUUID } from "node:crypto";

/** The first run date of `schedule` after `after` (ISO), or null if it falls after `endTime`. */
export function nextRunDate(
  schedule: string,
  timezone: string | null | undefined,
  after: Date,
  endTime?: string | null,
): string | null {
  const tz = timezone ?? "UTC";
  try {
    // An unknown zone is the timezone's fault, not the schedule's (cron-parser reports both alike).
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
  } catch {
    throw invalidInput(`timezone: "${tz}" is not a known IANA time zone (e.g. "Europe/Paris")`, "timezone");
  }
  let next: Date;
  try {
    next = CronExpressionParser.parse(schedule, { currentDate: after, tz }).next().toDate();
  } catch (e) {
    throw invalidInput(
      `schedule: "${schedule}" is not a valid cron expression (${(e as Error).message})`,
      "schedule",
    );
  }
  if (endTime && next.getTime() > new Date(endTime).getTime()) return null;
  return next.toISOString();
}

/** next_run_date while a cron's last date is being fired (never due). */
const FIRING_LAST = "9999-12-31T23:59:59.999Z";

/** The channel of the broker's signals saying a cron was made or changed (CronScheduler wakes up). */
export const CRONS_SIGNAL = "crons";

/**
 * Longest sleep of the scheduler: it sleeps until the next cron is due, and is woken by CRONS_SIGNAL when a cron is
 * made or changed (by any process of the deployment); this bounds how late a cron fires if a signal was lost.
 */
const MAX_SLEEP_MS = 5_000;

export class CronScheduler {
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  /** A wake-up came during a look at the crons: look again at once after it. */
  private again = false;
  private stopped = true;

  constructor(
    private storage: Storage,
    private runs: RunService,
    private log: Logger,
    /** The broker's signals (CRONS_SIGNAL wakes the scheduler). */
    private signals?: Pick<Broker, "onSignal">,
  ) {}

  start(): void {
    this.stopped = false;
    this.signals
      ?.onSignal(CRONS_SIGNAL, () => this.wake())
      .catch((e: Error) =>
        this.log.warn(`cron scheduler: no wake-up signals (${e.message}); it looks every 5 s`),
      );
    this.sleep(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Looks at the crons now (a cron was made or changed). */
  wake(): void {
    if (this.ticking) this.again = true;
    else this.sleep(0);
  }

  private sleep(ms: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  /** Fires the due crons' runs, then sleeps until the next one is due (at most MAX_SLEEP_MS). */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    let nextDue: number | null = null;
    try {
      const now = new Date();
      for (const cron of await this.storage.crons.due(now.toISOString())) {
        // Missed dates (the server was down) fire once, and the schedule moves on from now.
        const next = nextRunDate(cron.schedule, cron.timezone, now, cron.end_time);
        // The last date: the cron shows as ended (next_run_date null) only once its run exists, so whoever
        // sees it ended sees all its runs. Meanwhile the date is claimed with a date that is never due.
        const claimWith = next ?? FIRING_LAST;
        if (await this.storage.crons.claim(cron.cron_id, cron.next_run_date!, claimWith)) {
          await this.fire(cron, cron.next_run_date!);
          if (next === null) await this.storage.crons.claim(cron.cron_id, FIRING_LAST, null);
        }
      }
      nextDue = await this.storage.crons.nextDue();
    } catch (e) {
      this.log.error({ err: e }, "cron scheduler failed");
    } finally {
      this.ticking = false;
    }
    const wait = this.again ? 0 : nextDue === null ? MAX_SLEEP_MS : nextDue - Date.now();
    this.again = false;
    this.sleep(Math.min(Math.max(wait, 0), MAX_SLEEP_MS));
  }

  /**
   * Starts the run of one scheduled date; its metadata names the cron and the date. What it writes is encrypted
   * for the cron's owner (custom encryption's context), as the request that made the cron was.
   */
  private fire(cron: Cron, scheduledAt: string): Promise<void> {
    return withEncryptionUser(runOwner(cron.payload), () => this.fireAs(cron, scheduledAt));
  }

  private async fireAs(cron: Cron, scheduledAt: string): Promise<void> {
    try {
      const body = RunCreateStateful.parse({
        ...cron.payload,
        assistant_id: cron.assistant_id,
        metadata: {
          ...((cron.payload.metadata as object) ?? {}),
          cron_id: cron.cron_id,
          cron_scheduled_at: scheduledAt,
        },
      });
      if (cron.thread_id) {
        const thread = await this.storage.threads.get(cron.thread_id);
        if (!thread) {
          this.log.warn(
            { cron_id: cron.cron_id, thread_id: cron.thread_id },
            "the cron's thread is gone; disabling the cron",
          );
          await this.storage.crons.update(cron.cron_id, { enabled: false });
          return;
        }
        await this.storage.threads.setState(cron.thread_id, { metadata: { cron_id: cron.cron_id } });
        await this.runs.createStateful(cron.thread_id, body);
        return;
      }
      const threadId = randomUUID();
      await this.storage.threads.create({ thread_id: threadId, metadata: { cron_id: cron.cron_id } });
      const started = await this.runs.createStateful(threadId, body);
      if (cron.on_run_completed === "delete") {
        // After the run, in the background: a thread that could not be deleted is logged and left in place.
        void started.done
          .then(() => this.storage.threads.delete(threadId))
          .catch((e) =>
            this.log.warn(
              { cron_id: cron.cron_id, thread_id: threadId },
              `cron's thread not deleted: ${(e as Error).message}`,
            ),
          );
      }
    } catch (e) {
      this.log.warn({ cron_id: cron.cron_id }, `cron could not start its run: ${(e as Error).message}`);
    }
  }
}
