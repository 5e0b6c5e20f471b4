// One lock's truth: its state, the events applied to it, its one command queue, its guard
// (auto-lock and the "left open / left unlocked" alerts) and what it keeps across restarts. HomeKit
// and Matter are views that follow its changes and send it commands; neither holds state of its own.
import type { Clock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import { deviceLogger, type Logger } from '../util/logger.js';
import { ChangeListeners, type ChangeListener, type ListenerPhase } from './change-listeners.js';
import type { GuardAlerts, LockChange, LockFeed } from './device-changes.js';
import type { DeviceStore } from './device-store.js';
import { newDoorHistory, parseDoorHistory, recordDoor, resetDoorCount, type DoorHistoryState } from './door-history.js';
import type { DeliveryContext } from './event-time.js';
import { autoLockWords, type OwnAction } from './event-words.js';
import type { LockEvent } from './events.js';
import { commandAction } from './last-action.js';
import { LockCommands, type CommandOutcome, type LockAction } from './lock-commands.js';
import { AUTO_LOCK_ORIGIN, guardSettings, guardSettingsKey, LockGuard, type GuardSettings } from './lock-guard.js';
import { doorSensorDeclared } from './lock-parts.js';
import { commandSucceeded, eventServiceTime, initialLockState, lockDisplayName, parseLockState, reduceLock, repairLockMarks, withEntryName, type LockState } from './lock-state.js';
import type { LockEntry } from './device-entry.js';
import { personTrigger, triggerLine, type Trigger } from './person-triggers.js';
import type { ReachabilityProof } from './reachability.js';

export interface LockDeviceDeps {
  log: Logger;
  /** Sends a remote command; rejects when the service or the lock's bridge refused it. */
  operate(lockId: string, action: LockAction): Promise<void>;
  /** Plain words for why a command to the lock failed (and who sent it, when that is worth saying), ending with a full stop. */
  describeCommandFailure(error: unknown, lockId: string): string;
  store: DeviceStore;
  clock: Clock;
}

/** Where the state is kept (the key predates the model and stays, so saved state carries over). */
export const LOCK_STATE_KEY = 'lockAccess';
/** The auto-lock delay changed from HomeKit, with the config value it was changed against. */
export const GUARD_DELAY_KEY = 'lockAccessGuard';
/** The door's open/close history (Eve shows it). */
export const DOOR_HISTORY_KEY = 'doorHistory';
/** The lock callback within this long after the plugin's own auto-lock is attributed to it. */
export const AUTO_LOCK_FOLLOW_MS = 60_000;
/** The longest auto-lock delay HomeKit can set (AutoSecurityTimeout is in seconds). */
const MAX_AUTO_LOCK_SECONDS = 3600;

interface SavedDelay {
  configSeconds: number;
  homekitSeconds: number;
}

function savedDelay(raw: unknown): SavedDelay | undefined {
  const value = raw as Partial<SavedDelay> | undefined;
  return typeof value?.configSeconds === 'number' && typeof value.homekitSeconds === 'number' ? { configSeconds: value.configSeconds, homekitSeconds: value.homekitSeconds } : undefined;
}

export class LockDevice implements LockFeed {
  private current: LockState;
  private entryValue: LockEntry;
  private readonly commands: LockCommands;
  private readonly changes: ChangeListeners<LockChange>;
  private readonly guard: LockGuard;
  /** Every line this lock logs, prefixed with its name. */
  readonly log: Logger;
  /** Who asked last for each action; the command that runs logs it. */
  private readonly origins: Record<LockAction, string> = { lock: 'Apple Home', unlock: 'Apple Home' };
  /**
   * When the plugin last sent its own auto-lock and how long the door had been closed: the lock
   * callback that follows is that, not a person. Cleared when that command fails.
   */
  private autoLock: { at: number; closedSeconds: number } | undefined;
  private warnedNoSensor = false;
  private disposed = false;
  /** The key of the last event that fired a person's trigger: the same event never fires twice. */
  private lastFired: string | undefined;
  private peopleIds: ReadonlySet<string>;
  private history: DoorHistoryState;

  constructor(
    private readonly deps: LockDeviceDeps,
    entry: LockEntry,
  ) {
    this.entryValue = { ...entry };
    const stored = deps.store.read(LOCK_STATE_KEY);
    const cached = parseLockState(stored);
    const repaired = cached === undefined ? undefined : repairLockMarks(cached, deps.clock.now());
    this.current = withEntryName(repaired ?? initialLockState(), entry.name);
    this.log = deviceLogger(deps.log, () => this.name);
    if (stored !== undefined && !cached) this.log.warn('the saved state could not be read, so it starts fresh.');
    if (repaired !== cached) this.log.info('the saved event times lay in the future (a lock clock that ran ahead), so ordering starts again from now.');
    this.peopleIds = new Set((entry.people ?? []).map((person) => person.userId));
    const nowSeconds = Math.round(deps.clock.now() / 1000);
    this.history = parseDoorHistory(deps.store.read(DOOR_HISTORY_KEY), nowSeconds) ?? newDoorHistory(nowSeconds);
    this.commands = new LockCommands((action) => this.execute(action));
    this.changes = new ChangeListeners(this.log);
    this.guard = new LockGuard({
      lock: this,
      settings: () => this.guardSettings(),
      clock: deps.clock,
      log: this.log,
      onAlerts: (alerts) => {
        this.changes.emit({ cause: 'alerts', state: this.current, alerts });
      },
      commandPending: () => this.commands.current !== undefined || this.commands.next !== undefined,
      onAutoLockSent: (at, closedSeconds) => {
        this.autoLock = { at, closedSeconds };
      },
    });
    this.warnIfAutoLockBlind();
    this.store();
  }

  get state(): LockState {
    return this.current;
  }

  get entry(): Readonly<LockEntry> {
    return this.entryValue;
  }

  get name(): string {
    return lockDisplayName(this.current, this.entryValue.name);
  }

  get alerts(): GuardAlerts {
    return this.guard.current;
  }

  get doorHistory(): DoorHistoryState {
    return this.history;
  }

  /** Follows every change; returns the function that stops following. */
  onChange(listener: ChangeListener<LockChange>, phase?: ListenerPhase): () => void {
    return this.changes.add(listener, phase);
  }

  /**
   * Applies one callback event (already verified, parsed and de-duplicated by the receiver). Returns
   * what the plugin itself did, when the event is the lock callback of its own auto-lock: the event
   * log words it so, not as the account owner's remote lock.
   */
  apply(event: LockEvent, context: DeliveryContext): OwnAction | undefined {
    if (this.disposed) return undefined;
    if (event.lockId !== this.entryValue.id) {
      this.log.debug(`ignored an event for another lock (${event.lockId}).`);
      return undefined;
    }
    const wasOnline = this.current.online;
    const own = this.followsAutoLock(event, context.receivedAt);
    const byAutoLock = own !== undefined;
    if (byAutoLock) this.autoLock = undefined;
    const result = reduceLock(this.current, event, context, byAutoLock ? 'securedByAutoLock' : undefined);
    this.current = result.state;
    // The lock callback that follows the plugin's own auto-lock: nobody locked it, so no trigger.
    const decision = byAutoLock ? undefined : personTrigger(event, { receivedAt: context.receivedAt, signedAt: context.signedAt, applied: result.applied, people: this.peopleIds, lastFired: this.lastFired });
    if (decision?.fire === true) this.lastFired = decision.key;
    if (result.applied) this.rememberDoor(event, context);
    this.store();
    const line = decision === undefined ? undefined : triggerLine(decision, event, this.entryValue.people ?? []);
    if (!result.applied) {
      this.log.debug(`${result.text}: older than the last event of its kind, so it changes nothing.`);
      this.changes.emit({ cause: 'stale', state: this.current, event, context, byAutoLock });
      if (line) this.log[line.level](line.text);
      return own;
    }
    const trigger = decision?.fire === true ? { userId: decision.userId, press: decision.press } satisfies Trigger : undefined;
    this.changes.emit({ cause: 'event', state: this.current, event, context, byAutoLock, trigger });
    // Logged after the views have the change: a log line is a synchronous write that can wait on a
    // slow reader of Homebridge's output.
    if (line) this.log[line.level](line.text);
    const reachabilityChanged = wasOnline !== this.current.online;
    if (event.kind === 'lockState' && event.source === 'status') this.log.debug(`${result.text}.`);
    else if (own !== undefined) this.log.info(`${autoLockWords(own.autoLockSeconds)}.`);
    else if (!(event.kind === 'online' && reachabilityChanged)) this.log.info(`${result.text}.`);
    if (reachabilityChanged) this.logReachability(event.kind === 'online' ? 'online' : 'status');
    return own;
  }

  /** Config or discovery changed this lock's entry. */
  update(entry: LockEntry): void {
    if (this.disposed) return;
    const guardChanged = guardSettingsKey(entry) !== guardSettingsKey(this.entryValue);
    this.entryValue = { ...entry };
    this.peopleIds = new Set((entry.people ?? []).map((person) => person.userId));
    this.current = withEntryName(this.current, entry.name);
    this.warnIfAutoLockBlind();
    this.store();
    this.changes.emit({ cause: 'entry', state: this.current });
    if (guardChanged) this.guard.settingsChanged();
  }

  /** Queues a remote command; settles (never rejects) with the outcome of the command it joined. */
  request(action: LockAction, origin: string): Promise<CommandOutcome> {
    if (this.commands.current === action && this.commands.next === undefined) {
      this.log.debug(`${action} is already on its way; joining it.`);
    } else {
      this.log.info(`${action === 'lock' ? 'locking' : 'unlocking'} from ${origin}.`);
    }
    this.origins[action] = origin;
    if (origin !== AUTO_LOCK_ORIGIN) this.guard.commandRequested();
    return this.commands.request(action);
  }

  /**
   * A controller wrote a target that becomes a command a moment later: the auto-lock countdown
   * stops now, at the write.
   */
  targetWritten(): void {
    if (!this.disposed) this.guard.commandRequested();
  }

  /** Like request(), but rejects when the command failed, so a controller can answer with a failure. */
  async command(action: LockAction, origin: string): Promise<void> {
    if (this.disposed) throw new Error(`${this.name} is no longer served`);
    const outcome = await this.request(action, origin);
    if (!outcome.ok) throw outcome.error instanceof Error ? outcome.error : new Error(errorText(outcome.error));
  }

  /** The auto-lock delay in force: one set from HomeKit, unless the config value changed since. */
  autoLockSeconds(): number {
    const config = this.entryValue.autoLockSeconds ?? 0;
    const saved = savedDelay(this.deps.store.read(GUARD_DELAY_KEY));
    return saved !== undefined && saved.configSeconds === config ? saved.homekitSeconds : config;
  }

  /** A controller set the auto-lock delay: kept across restarts; 0 turns auto-lock off. */
  setAutoLockSeconds(seconds: number, from: string): void {
    if (this.disposed) return;
    const value = Math.max(0, Math.min(MAX_AUTO_LOCK_SECONDS, Math.round(seconds)));
    this.deps.store.write(GUARD_DELAY_KEY, { configSeconds: this.entryValue.autoLockSeconds ?? 0, homekitSeconds: value } satisfies SavedDelay, 'now');
    this.log.info(`auto-lock ${value === 0 ? 'turned off' : `set to ${value} s`} from ${from}.`);
    this.guard.settingsChanged();
  }

  /** Eve's reset button: the opening count starts again (the history stays). */
  resetDoorCount(resetTotal: number): void {
    if (this.disposed) return;
    this.history = resetDoorCount(this.history, resetTotal);
    this.deps.store.write(DOOR_HISTORY_KEY, this.history, 'now');
  }

  dispose(): void {
    this.disposed = true;
    this.guard.dispose();
    this.changes.clear();
    this.deps.store.dispose();
  }

  /** Events may have been lost on their way here (not arriving, or arriving again): auto-lock waits for a door report that happened after now. */
  eventsMayBeMissed(): void {
    if (!this.disposed) this.guard.eventsMayBeMissed();
  }

  private guardSettings(): GuardSettings {
    return guardSettings(this.entryValue, this.autoLockSeconds());
  }

  private warnIfAutoLockBlind(): void {
    const entry = this.entryValue;
    if ((entry.autoLockSeconds ?? 0) > 0 && !doorSensorDeclared(entry) && !this.warnedNoSensor) {
      this.warnedNoSensor = true;
      this.log.warn(`autoLockSeconds needs a door sensor ("doorSensor": true on this lock): the plugin locks only once it knows the door is closed, so auto-lock stays off.`);
    }
  }

  private followsAutoLock(event: LockEvent, receivedAt: number): OwnAction | undefined {
    const sent = this.autoLock;
    const follows = sent !== undefined && event.kind === 'lockState' && event.source === 'operation' && event.state === 'locked' && receivedAt >= sent.at && receivedAt - sent.at <= AUTO_LOCK_FOLLOW_MS;
    return follows ? { autoLockSeconds: sent.closedSeconds } : undefined;
  }

  private logReachability(proof: ReachabilityProof): void {
    if (!this.current.online) {
      this.log.warn(`the lock's Wi-Fi bridge is offline; Apple Home shows No Response until it is back.`);
    } else if (proof === 'online') {
      this.log.info(`the lock's Wi-Fi bridge is back online.`);
    } else {
      this.log.info(`the lock's Wi-Fi bridge answered ${proof === 'status' ? 'a status request' : 'a command'}, so it is back online.`);
    }
  }

  private store(): void {
    this.deps.store.write(LOCK_STATE_KEY, this.current, 'batched');
  }

  /** What an applied door event leaves behind besides the reducer's state: the door's history. */
  private rememberDoor(event: LockEvent, context: DeliveryContext): void {
    if (event.kind !== 'doorState' || event.state === 'init' || event.state === 'unknown') return;
    // At the event's own time read in the service's clock (the lock's lead taken off), never later
    // than now: a lock clock ahead must not reorder Eve's entries.
    const seconds = Math.round(Math.min(eventServiceTime(this.current, event, context) ?? context.receivedAt, this.deps.clock.now()) / 1000);
    const change = recordDoor(this.history, seconds, event.state !== 'closed');
    if (!change.recorded) return;
    this.history = change.state;
    this.deps.store.write(DOOR_HISTORY_KEY, this.history, 'batched');
  }

  /** Rejects when the command failed (after reporting it), so those who joined it learn the outcome. */
  private async execute(action: LockAction): Promise<void> {
    const origin = this.origins[action];
    try {
      await this.deps.operate(this.entryValue.id, action);
    } catch (error) {
      // A failed auto-lock locked nothing: a lock callback after it is a person's.
      if (origin === AUTO_LOCK_ORIGIN) this.autoLock = undefined;
      if (!this.disposed) {
        this.log.error(`could not ${action} from ${origin}: ${this.deps.describeCommandFailure(error, this.entryValue.id)}`);
        this.changes.emit({ cause: 'commandFailed', state: this.current, action, origin, superseded: this.commands.next !== undefined });
      }
      throw error;
    }
    if (this.disposed) return;
    const wasOnline = this.current.online;
    const lastAction = origin === AUTO_LOCK_ORIGIN && action === 'lock' ? 'securedByAutoLock' : commandAction(action);
    this.current = { ...commandSucceeded(this.current, action === 'lock' ? 'locked' : 'unlocked'), lastAction };
    this.store();
    this.changes.emit({ cause: 'command', state: this.current, action, origin, settled: this.commands.next === undefined });
    this.log.info(`${action === 'lock' ? 'locked' : 'unlocked'} from ${origin}.`);
    if (!wasOnline) this.logReachability('command');
  }
}
