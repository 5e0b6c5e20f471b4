// Runs a job at most one at a time: a request while it runs makes it run once more afterwards
// (however many requests came meanwhile), so the last request is always served by a run that
// started after it.
export class SingleRun {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly job: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
    /** Checked before each run: once true, nothing runs again. */
    private readonly stopped: () => boolean = () => false,
  ) {}

  request(): void {
    if (this.stopped()) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.job()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped()) {
          this.again = false;
          this.request();
        }
      });
  }

  /** The run under way, if any (tests and shutdown wait for it). */
  get current(): Promise<void> | undefined {
    return this.running;
  }
}
