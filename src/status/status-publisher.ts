// What the settings UI reads about the running plugin: the status file (link, devices,
// registrations, receiver counters, self-check) and the event log. One place writes them all.
import type { ReceiverStats } from '../callbacks/receiver-tally.js';
import type { LinkState, TokenProblem } from '../cloud/tokens/token-manager.js';
import type { LockState } from '../model/lock-state.js';
import type { EventLog } from './event-log.js';
import type { RegistrationRow, StatusPatch, StatusWriter } from './status.js';
import type { RoutedEvent } from '../callbacks/event-router.js';
import type { DeviceSource } from '../cloud/discovery.js';
import { deviceKey, type DeviceKind } from '../model/device-entry.js';
import { linkMessage, linkStatusMessage } from '../cloud/link-messages.js';
import { legacyMessage, type UiMessage } from '../util/ui-message.js';
import { deliveryMessage } from './delivery-messages.js';

/** A registration as the registrar reports it: its last error in words (for the log) and its reason. */
export type RegistrarRow = Omit<RegistrationRow, 'lastError'> & { lastError?: string | undefined; lastReason?: UiMessage | undefined };

/** The devices the plugin serves, as the device registry lists them. */
export interface ServedDeviceList {
  lockIds(): string[];
  doorbellIds(): string[];
  lock(id: string): { readonly state: Pick<LockState, 'online'> } | undefined;
  nameOf(kind: DeviceKind, id: string): string;
}

export interface StatusPublisherDeps {
  status: StatusWriter;
  eventLog: EventLog;
  /** The token manager's own sentence for the link state, when it has one. */
  linkMessage(): string | undefined;
  /** Something the link state alone does not say (a setting to fix, tokens not saved yet). */
  linkProblem?(): TokenProblem | undefined;
  /** With problem `settings`: the setting the token service refused, when it said which. */
  linkSetting?(): string | undefined;
  now?: () => number;
}

export class StatusPublisher {
  /** Where each device (`lock:ID`) is known from, as the last discovery said. */
  private sources: ReadonlyMap<string, DeviceSource> = new Map();

  constructor(private readonly deps: StatusPublisherDeps) {}

  update(patch: StatusPatch): void {
    this.deps.status.update(patch);
  }

  /** Also called when only the message or problem changed: `since` then keeps the state's start. */
  link(state: LinkState): void {
    const now = this.deps.now ?? Date.now;
    // A wrong client id or secret gets its own state, so the page does not call the link healthy.
    const problem = this.deps.linkProblem?.();
    const shown = problem === 'settings' ? 'checkSettings' : state;
    const previous = this.deps.status.status.link;
    const since = previous.state === shown && previous.since !== undefined ? previous.since : now();
    const message = linkStatusMessage(problem, this.deps.linkMessage(), this.deps.linkSetting?.()) ?? linkMessage(`link.${state}`);
    this.deps.status.update({ link: { state: shown, message, since } });
  }

  /** The main account's settings have a mistake: it sends nothing until the named fields are fixed. */
  disabled(fields: readonly string[]): void {
    const now = this.deps.now ?? Date.now;
    this.deps.status.update({ link: { state: 'checkSettings', message: linkMessage('link.mainDisabled', { fields: fields.join(', ') }), since: now() } });
  }

  /** Where each device is known from (config, the service or both), for the next device list. */
  knownFrom(sources: ReadonlyMap<string, DeviceSource>): void {
    this.sources = sources;
  }

  devices(shown: ServedDeviceList): void {
    const devices = [
      ...shown.lockIds().map((id) => ({ kind: 'lock' as const, id, online: shown.lock(id)?.state.online })),
      ...shown.doorbellIds().map((id) => ({ kind: 'doorbell' as const, id, online: undefined })),
    ].map((d) => {
      const source = this.sources.get(deviceKey(d.kind, d.id)) ?? 'config';
      return { kind: d.kind, id: d.id, name: shown.nameOf(d.kind, d.id), source, hidden: false, online: d.online };
    });
    this.deps.status.update({ devices });
  }

  /**
   * The registrar's rows; a failure becomes a message with its reason (a ledger an earlier version
   * wrote has only the error's words, shown as they are).
   */
  registrations(rows: readonly RegistrarRow[]): void {
    const registrations = rows.map(({ lastError, lastReason, ...row }): RegistrationRow => {
      if (lastError === undefined) return row;
      return { ...row, lastError: deliveryMessage('registration.failed', { reason: lastReason ?? legacyMessage(lastError) }) };
    });
    this.deps.status.update({ registrations });
  }

  receiverStats(stats: Pick<ReceiverStats, 'duplicates' | 'rejected' | 'lastRejection' | 'lastUnknownPath'>): void {
    this.deps.status.receiverCounters(stats.duplicates, stats.rejected, stats.lastRejection, stats.lastUnknownPath);
  }

  /** An event routed to a device (or the account), for the event log and the last-callback times. */
  record(routed: RoutedEvent): void {
    // The routed event has every field of the log's record: handed over as it is.
    this.deps.eventLog.record(routed);
    const { deviceKind, deviceId, event, receivedAt } = routed;
    if (deviceKind !== 'account') this.deps.status.callbackAccepted({ deviceKind, deviceId, at: receivedAt, kind: event.kind });
  }
}
