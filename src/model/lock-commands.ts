// Serialises remote commands to one lock: one runs at a time, a command already running or waiting
// is joined instead of repeated, and a newer wish replaces one that has not started yet.
export type LockAction = 'lock' | 'unlock';

/** A waiting command was dropped because a newer wish (the opposite action) replaced it: it never ran. */
export class CommandSupersededError extends Error {
  constructor(action: LockAction) {
    super(`the ${action} command was replaced by a newer one before it started`);
    this.name = 'CommandSupersededError';
  }
}

/** How the command a request ended up joining went; requests never reject. */
export type CommandOutcome = { ok: true } | { ok: false; error: unknown };

type Joiner = (outcome: CommandOutcome) => void;

export class LockCommands {
  private running: { action: LockAction; done: Promise<CommandOutcome> } | undefined;
  private waiting: { action: LockAction; joiners: Joiner[] } | undefined;

  /** `execute` reports its own outcome to the user; a rejection is the command's failure, handed to those who joined it. */
  constructor(private readonly execute: (action: LockAction) => Promise<void>) {}

  /** What runs now, if anything. */
  get current(): LockAction | undefined {
    return this.running?.action;
  }

  /** The command that will run after the current one, if any. */
  get next(): LockAction | undefined {
    return this.waiting?.action;
  }

  /** Settles, with its outcome, when the command this request ended up joining has finished. */
  request(action: LockAction): Promise<CommandOutcome> {
    const running = this.running;
    if (!running) return this.start(action);
    if (this.waiting) {
      if (running.action === action) {
        // The latest wish is what already runs: the waiting opposite command is dropped. Its callers
        // learn that it never ran (a Matter controller must not be told its unlock worked).
        const dropped = this.waiting;
        this.waiting = undefined;
        for (const joiner of dropped.joiners) joiner({ ok: false, error: new CommandSupersededError(dropped.action) });
        return running.done;
      }
      this.waiting.action = action;
      return this.join(this.waiting);
    }
    if (running.action === action) return running.done;
    this.waiting = { action, joiners: [] };
    return this.join(this.waiting);
  }

  private join(waiting: { joiners: Joiner[] }): Promise<CommandOutcome> {
    return new Promise((resolve) => waiting.joiners.push(resolve));
  }

  private start(action: LockAction): Promise<CommandOutcome> {
    const done = this.execute(action)
      .then(
        (): CommandOutcome => ({ ok: true }),
        (error: unknown): CommandOutcome => ({ ok: false, error }),
      )
      .finally(() => {
        this.running = undefined;
        const waiting = this.waiting;
        this.waiting = undefined;
        if (waiting) {
          void this.start(waiting.action).then((outcome) => {
            for (const joiner of waiting.joiners) joiner(outcome);
          });
        }
      });
    this.running = { action, done };
    return done;
  }
}
