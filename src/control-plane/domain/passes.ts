// The passes of a loop over deployments (the reconciler's, the image builds'), one at a time: a wake-up during a
// pass runs one more right after it, so a change made meanwhile is never missed and passes never overlap.

export class Passes {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly onError: (e: unknown) => void,
    private readonly stopped: () => boolean,
  ) {}

  /** Runs a pass now (or right after the one running). */
  wake(): void {
    if (this.stopped()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (e) {
          this.onError(e);
        }
      } while (this.again && !this.stopped());
    })().finally(() => (this.running = null));
  }

  /** The pass running, if any. */
  get current(): Promise<void> | null {
    return this.running;
  }

  /** Runs one pass outside the wake-ups (after the one running), which it holds off until it ends; its result. */
  async once(): Promise<void> {
    while (this.running) await this.running;
    const pass = this.pass();
    this.running = pass.catch(() => {}).finally(() => (this.running = null));
    await pass;
  }
}
