// "A day at the front door": a scripted run of events for demos, all at once with an interval
// between steps (driven by the sim's clock) or one step at a time.
import type { DeliveryResult } from './delivery.js';
import type { FireOptions } from './events.js';
import type { SimClock } from './clock.js';

export interface ScenarioStep {
  event: string;
  options: FireOptions;
  description: string;
}

export const DEFAULT_STEP_INTERVAL_MS = 3000;

export function frontDoorDay(ids: { lockId: string; doorbellId: string; dvrId: string }): ScenarioStep[] {
  const { lockId, doorbellId, dvrId } = ids;
  return [
    { event: 'unlock', options: { lockId, by: 'keypad' }, description: 'Jamie unlocks the front door with a PIN at the keypad' },
    { event: 'door-open', options: { lockId }, description: 'the door opens' },
    { event: 'door-closed', options: { lockId }, description: 'the door closes' },
    { event: 'onetouchlock', options: { lockId }, description: 'Jamie locks with one touch at the keypad' },
    { event: 'motion', options: { doorbellId }, description: 'the doorbell sees motion and takes a still image' },
    { event: 'doorbell-press', options: { doorbellId, dvrId }, description: 'a courier presses the doorbell' },
    { event: 'video-available', options: { doorbellId, dvrId, cause: 'buttonpush' }, description: 'the recording of the press is available' },
    { event: 'unlock', options: { lockId, by: 'app' }, description: 'Alex unlocks with the app to take the parcel' },
    { event: 'door-open', options: { lockId }, description: 'the door opens' },
    { event: 'door-ajar', options: { lockId }, description: 'the door is left ajar' },
    { event: 'door-closed', options: { lockId }, description: 'the door closes' },
    { event: 'lock', options: { lockId, by: 'manual' }, description: 'Alex locks by hand from inside' },
    { event: 'pin-managed', options: { lockId, state: 'load' }, description: 'Alex gives Jamie a keypad code for weekdays, 08:00-18:00 (the code itself never reaches the plugin\'s files)' },
    { event: 'unlock', options: { lockId, by: 'app' }, description: 'Alex unlocks with the app and leaves the door closed: auto-lock locks it again a few seconds later' },
    { event: 'keypad-battery', options: { lockId, level: 'warning' }, description: 'the keypad battery runs low' },
    { event: 'bridge-offline', options: { lockId }, description: 'the Wi-Fi bridge goes offline' },
    { event: 'bridge-online', options: { lockId }, description: 'the Wi-Fi bridge is back online' },
  ];
}

export interface StepReport {
  index: number;
  total: number;
  step: ScenarioStep;
  results: DeliveryResult[];
  done: boolean;
}

/** One run of a scenario: `next()` fires one step; `start()` fires them all with an interval. */
export class ScenarioRun {
  private index = 0;
  private timer: unknown;
  private cancelled = false;
  private finished: (() => void) | undefined;
  readonly reports: StepReport[] = [];

  constructor(
    readonly steps: readonly ScenarioStep[],
    private readonly fire: (event: string, options: FireOptions) => Promise<DeliveryResult[]>,
    private readonly clock: SimClock,
  ) {}

  get done(): boolean {
    return this.cancelled || this.index >= this.steps.length;
  }

  async next(): Promise<StepReport | undefined> {
    if (this.done) return undefined;
    const index = this.index++;
    const step = this.steps[index] as ScenarioStep;
    const results = await this.fire(step.event, step.options);
    const report = { index, total: this.steps.length, step, results, done: this.index >= this.steps.length };
    this.reports.push(report);
    return report;
  }

  /** Fires every remaining step, `intervalMs` apart on the clock; resolves when the last has fired. */
  start(intervalMs = DEFAULT_STEP_INTERVAL_MS, onStep?: (report: StepReport) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.finished = resolve;
      const tick = (): void => {
        this.next().then((report) => {
          if (report) onStep?.(report);
          if (this.done) resolve();
          else this.timer = this.clock.setTimeout(tick, intervalMs);
        }, reject);
      };
      tick();
    });
  }

  /** Stops a running `start()` (which then resolves) and any further `next()`. */
  cancel(): void {
    this.cancelled = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.finished?.();
  }
}
