// Hands each acknowledged callback's events to the device they name, keyed by device id: to its
// accessory (which applies and logs them) and to the event log and status. What an event means
// beyond its device (a membership change, the account's deletion) is
// passed to functions the runtime injects, so the router knows no registry, cloud or status file.
import type { DeliveryContext } from '../model/event-time.js';
import { describeEvent, type OwnAction } from '../model/event-words.js';
import { isDoorbellEvent, isLockEvent, type DeviceEvent, type DoorbellEvent, type LockEvent } from '../model/events.js';
import { deviceLogger, type Logger } from '../util/logger.js';
import type { DeviceKind } from '../model/device-entry.js';

/** Something that takes one device's events: an accessory. `Said`: what it tells back about an event. */
export interface EventSink<E, Said = void> {
  apply(event: E, context: DeliveryContext): Said;
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

export interface EventRouterDeps {
  /** A lock says what the plugin itself did for an event (the lock callback of its own auto-lock). */
  lock(id: string): EventSink<LockEvent, OwnAction | undefined> | undefined;
  doorbell(id: string): EventSink<DoorbellEvent> | undefined;
  /** The name Apple Home shows, or the id of a device it does not show. */
  nameOf(kind: DeviceKind, id: string): string;
  /** Event lines for devices without an accessory (held to a household pace). */
  log: Logger;
  record(routed: RoutedEvent): void;
  /** The user webhook said someone (`userId`) was added to or removed from a lock of the account. */
  membershipChanged(lockId: string, change: 'added' | 'removed', userId: string | undefined): void;
  /** The account was deleted (a lifecycle callback). */
  accountDeleted(): void;
  /** After each callback's events (receiver counters). */
  routed(): void;
  /** Unlinked: events are dropped. */
  isIdle(): boolean;
}

export class EventRouter {
  constructor(private readonly deps: EventRouterDeps) {}

  /** Called by the receiver after it has acknowledged a callback. */
  route(events: readonly DeviceEvent[], context: DeliveryContext): void {
    const { deps } = this;
    if (deps.isIdle()) return;
    for (const event of events) {
      if (isLockEvent(event)) {
        // Before applying: a removed lock's accessory is gone, so its event is logged as not shown.
        if (event.kind === 'membership' && event.viaUserHook && (event.change === 'added' || event.change === 'removed')) {
          deps.membershipChanged(event.lockId, event.change, event.user.userId);
        }
        const lock = deps.lock(event.lockId);
        const own = lock?.apply(event, context);
        this.deliver('lock', event.lockId, lock !== undefined, event, context, own);
      } else if (isDoorbellEvent(event)) {
        const doorbell = deps.doorbell(event.doorbellId);
        doorbell?.apply(event, context);
        this.deliver('doorbell', event.doorbellId, doorbell !== undefined, event, context);
      } else {
        this.record('account', 'account', 'Account', event, context);
        deps.accountDeleted();
      }
    }
    deps.routed();
  }

  /** After the device applied the event (when it is served): the log line when it is not, and the record. */
  private deliver(kind: DeviceKind, id: string, served: boolean, event: DeviceEvent, context: DeliveryContext, own?: OwnAction): void {
    const name = this.deps.nameOf(kind, id);
    // Accessories log what they apply; events for devices not in HomeKit are logged here.
    if (!served) deviceLogger(this.deps.log, () => name).info(`${describeEvent(event, name)} (not shown in HomeKit)`);
    this.record(kind, id, name, event, context, own);
  }

  private record(deviceKind: RoutedEvent['deviceKind'], deviceId: string, deviceName: string, event: DeviceEvent, context: DeliveryContext, own?: OwnAction): void {
    const routed: RoutedEvent = { deviceKind, deviceId, deviceName, event, at: event.at ?? context.receivedAt, receivedAt: context.receivedAt };
    if (own !== undefined) routed.own = own;
    this.deps.record(routed);
  }
}
