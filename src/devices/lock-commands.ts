// Serialises remote commands to one lock: one runs at a time, a command already running or waiting
// is joined instead of repeated, and a newer wish replaces one that has not started yet.
export type LockAction = 'lock' | 'unlock';

export class LockCommands {
  private running: { action: LockAction; done: Promise<void> } | undefined;
  private waiting: { action: LockAction; joiners: (() => void)[] } | undefined;

  /** `execute` reports its own outcome and must not reject (a rejection is swallowed here). */
  constructor(private readonly execute: (action: LockAction) => Promise<void>) {}

  /** What runs now, if anything. */
  get current(): LockAction | undefined {
    return this.running?.action;
  }

  /** The command that will run after the current one, if any. */
  get next(): LockAction | undefined {
    return this.waiting?.action;
  }

  /** Resolves when the command this request ended up joining has finished. */
  request(action: LockAction): Promise<void> {
    const running = this.running;
    if (!running) return this.start(action);
    if (this.waiting) {
      if (running.action === action) {
        // The latest wish is what already runs: the waiting opposite command is dropped, its callers join the running one.
        const dropped = this.waiting;
        this.waiting = undefined;
        void running.done.then(() => {
          for (const joiner of dropped.joiners) joiner();
        });
        return running.done;
      }
      this.waiting.action = action;
      return this.join(this.waiting);
    }
    if (running.action === action) return running.done;
    this.waiting = { action, joiners: [] };
    return this.join(this.waiting);
  }

  private join(waiting: { joiners: (() => void)[] }): Promise<void> {
    return new Promise((resolve) => waiting.joiners.push(resolve));
  }

  private start(action: LockAction): Promise<void> {
    const done = this.execute(action)
      .catch(() => undefined)
      .finally(() => {
        this.running = undefined;
        const waiting = this.waiting;
        this.waiting = undefined;
        if (waiting) {
          void this.start(waiting.action).then(() => {
            for (const joiner of waiting.joiners) joiner();
          });
        }
      });
    this.running = { action, done };
    return done;
  }
}
