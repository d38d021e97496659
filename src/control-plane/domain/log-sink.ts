// Buffered writer of build and deploy log lines to the control plane store, or to the control plane's API for a
// listener (one write per batch, not per line).
import type { LogKind, LogLevel, LogLine } from "./types.js";

export class LogSink {
  private buffer: LogLine[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** Deployments purged: their late lines are dropped. */
  private gone = new Set<string>();

  constructor(
    private store: { appendLogs(lines: LogLine[]): Promise<void> },
    private onError: (msg: string) => void,
    private intervalMs = 250,
  ) {}

  write(
    deploymentId: string,
    revisionId: string | null,
    kind: LogKind,
    level: LogLevel,
    message: string,
  ): void {
    if (this.gone.has(deploymentId)) return;
    this.buffer.push({
      deployment_id: deploymentId,
      revision_id: revisionId,
      kind,
      level,
      message,
      timestamp: new Date().toISOString(),
    });
    if (this.buffer.length >= 500) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
  }

  /** Writes what is buffered; resolves once every line written before the call is stored. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const lines = this.buffer.filter((l) => !this.gone.has(l.deployment_id));
    this.buffer = [];
    this.writing = this.writing.then(async () => {
      if (!lines.length) return;
      try {
        await this.store.appendLogs(lines);
      } catch (e) {
        this.onError(`could not store ${lines.length} log line(s): ${(e as Error).message}`);
      }
    });
    return this.writing;
  }

  /** Drops the deployment's buffered and future lines (it is being purged). */
  forget(deploymentId: string): void {
    this.gone.add(deploymentId);
    this.buffer = this.buffer.filter((l) => l.deployment_id !== deploymentId);
  }
}
