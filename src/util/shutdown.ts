// How the running plugin stops: each part, as it is built, says in which step it stops, and the
// steps run in a fixed order whatever the order of building. A part built after the stop began
// (a start still under way at shutdown) stops at once.

/**
 * - `halt`: timers, watches and outbound work stop (what they return is awaited at the very end);
 * - `close`: inbound ways close and are awaited, then one more turn for the events they delivered;
 * - `release`: the devices and their views let go (after the last events were applied);
 * - `flush`: files are written; awaited together with what `halt` returned.
 */
export type ShutdownStep = 'halt' | 'close' | 'release' | 'flush';

const ORDER: readonly ShutdownStep[] = ['halt', 'close', 'release', 'flush'];

type Stop = () => unknown;

export class Shutdown {
  private readonly stops = new Map<ShutdownStep, Stop[]>(ORDER.map((step) => [step, []]));
  private begun = false;
  private finished: Promise<void> | undefined;

  /** Once true, a start under way builds nothing more. */
  get stopping(): boolean {
    return this.begun;
  }

  /** `stop` runs in `step`; at once when the shutdown has begun. */
  on(step: ShutdownStep, stop: Stop): void {
    if (this.begun) {
      void settle(stop);
      return;
    }
    this.stops.get(step)?.push(stop);
  }

  /** Runs every step in order; a second call gets the first one's promise. Never rejects. */
  run(): Promise<void> {
    this.finished ??= this.runSteps();
    return this.finished;
  }

  private async runSteps(): Promise<void> {
    this.begun = true;
    const pending: Promise<void>[] = [];
    for (const step of ORDER) {
      const results = (this.stops.get(step) ?? []).map((stop) => settle(stop));
      if (step === 'close') {
        await Promise.all(results);
        // What the closed ways delivered just before is applied on the next turn.
        await new Promise((resolve) => setImmediate(resolve));
      } else {
        pending.push(...results);
      }
    }
    await Promise.all(pending);
  }
}

/** Runs a stop now; one that fails costs the others nothing (Homebridge is exiting: nothing to tell). */
function settle(stop: Stop): Promise<void> {
  try {
    return Promise.resolve(stop()).then(() => undefined, () => undefined);
  } catch {
    return Promise.resolve();
  }
}
