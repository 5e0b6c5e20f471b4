// Applies each acknowledged callback's events to the devices they name (the device registry, by
// device id) and announces what happened: a change of the account (a lock added or removed by the
// user webhook, the account deleted) before its events apply, and every event as routed after, for
// whoever follows (the event log and the status file, the account's setup, the link).
import type { DeliveryContext } from '../model/event-time.js';
import { describeEvent, type OwnAction } from '../model/event-words.js';
import { isDoorbellEvent, isLockEvent, type DeviceEvent, type DoorbellEvent, type LockEvent } from '../model/events.js';
import { deviceLogger, type Logger } from '../util/logger.js';
import { Signal } from '../util/signal.js';
import type { DeviceKind } from '../model/device-entry.js';

/** Something that takes one device's events: a device of the registry. `Said`: what it tells back about an event. */
export interface EventSink<E, Said = void> {
  apply(event: E, context: DeliveryContext): Said;
}

/** Where events apply: the device registry. */
export interface RoutedDevices {
  /** A lock says what the plugin itself did for an event (the lock callback of its own auto-lock). */
  lock(id: string): EventSink<LockEvent, OwnAction | undefined> | undefined;
  doorbell(id: string): EventSink<DoorbellEvent> | undefined;
  /** The name Apple Home shows, or the id of a device it does not show. */
  nameOf(kind: DeviceKind, id: string): string;
}

/** One routed event, for the event log and the status file. */
export interface RoutedEvent {
  deviceKind: DeviceKind | 'account';
  deviceId: string;
  deviceName: string;
  event: DeviceEvent;
  /** When it happened: the event's own time, else when it arrived (epoch ms). */
  at: number;
  receivedAt: number;
  /** The event is the plugin's own doing (its auto-lock), to be worded so. */
  own?: OwnAction;
}

/** What an event means beyond its device: someone (`userId`) added to or removed from a lock by the user webhook, the account deleted. */
export type AccountChange = ({ kind: 'membership'; lockId: string; change: 'added' | 'removed'; userId: string | undefined } | { kind: 'deleted' }) & {
  /** The extra account whose path the callback came on; undefined for the main account. */
  account?: string | undefined;
};

export class EventRouter {
  /** Heard before the devices apply the event: a lock that left the account is gone when its event is logged. */
  readonly accountChanged = new Signal<[AccountChange]>();
  /** Each event after its device applied it (or found no device to apply it to). */
  readonly routed = new Signal<[RoutedEvent]>();

  /** `log`: event lines for devices without a view (held to a household pace). */
  constructor(
    private readonly devices: RoutedDevices,
    private readonly log: Logger,
  ) {}

  /** Called once the receiver has acknowledged a callback; `account`: the extra account whose path it came on. */
  route(events: readonly DeviceEvent[], context: DeliveryContext, account?: string): void {
    for (const event of events) {
      if (isLockEvent(event)) {
        if (event.kind === 'membership' && event.viaUserHook && (event.change === 'added' || event.change === 'removed')) {
          this.accountChanged.emit({ kind: 'membership', lockId: event.lockId, change: event.change, userId: event.user.userId, ...(account === undefined ? {} : { account }) });
        }
        const lock = this.devices.lock(event.lockId);
        const own = lock?.apply(event, context);
        this.deliver('lock', event.lockId, lock !== undefined, event, context, own);
      } else if (isDoorbellEvent(event)) {
        const doorbell = this.devices.doorbell(event.doorbellId);
        doorbell?.apply(event, context);
        this.deliver('doorbell', event.doorbellId, doorbell !== undefined, event, context);
      } else {
        this.announce('account', 'account', 'Account', event, context);
        this.accountChanged.emit(account === undefined ? { kind: 'deleted' } : { kind: 'deleted', account });
      }
    }
  }

  /** After the device applied the event (when it is served): the log line when it is not, and the announcement. */
  private deliver(kind: DeviceKind, id: string, served: boolean, event: DeviceEvent, context: DeliveryContext, own?: OwnAction): void {
    const name = this.devices.nameOf(kind, id);
    // Devices log what they apply; events for devices not served are logged here.
    if (!served) deviceLogger(this.log, () => name).info(`${describeEvent(event, name)} (not shown in HomeKit)`);
    this.announce(kind, id, name, event, context, own);
  }

  private announce(deviceKind: RoutedEvent['deviceKind'], deviceId: string, deviceName: string, event: DeviceEvent, context: DeliveryContext, own?: OwnAction): void {
    const routed: RoutedEvent = { deviceKind, deviceId, deviceName, event, at: event.at ?? context.receivedAt, receivedAt: context.receivedAt };
    if (own !== undefined) routed.own = own;
    this.routed.emit(routed);
  }
}
