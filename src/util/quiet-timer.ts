// Runs a task once changes have paused for a whole `quietMs`, and at the latest about `maxDelayMs`
// after the first change since the last run. A burst of callbacks costs one run, and the run (a
// synchronous JSON serialisation of a whole file) lands after the burst instead of in the middle of
// it. One timer per `quietMs`, not one per change, and no clock: touch() runs for every callback.

export class QuietTimer {
  private timer: NodeJS.Timeout | undefined;
  private touched = false;
  private waited = 0;

  constructor(
    private readonly task: () => void,
    private readonly quietMs: number,
    private readonly maxDelayMs: number,
  ) {}

  /** A change: the task runs after the next quiet spell (or the longest delay). */
  touch(): void {
    if (this.timer !== undefined) {
      this.touched = true;
      return;
    }
    this.touched = false;
    this.waited = 0;
    this.wait();
  }

  /** Forgets the pending run (the caller runs the task itself, e.g. on shutdown). */
  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private wait(): void {
    this.timer = setTimeout(() => {
      this.check();
    }, this.quietMs);
    this.timer.unref();
  }

  private check(): void {
    this.waited += this.quietMs;
    if (!this.touched || this.waited >= this.maxDelayMs) {
      this.timer = undefined;
      this.task();
      return;
    }
    this.touched = false;
    this.wait();
  }
}
