// Wires the delivery watch (src/status/delivery-watch.ts) to the running plugin: which locks it may
// ask, the status request, the registrar's full re-send, the self-check, the status file, and the
// "Lock Access Events Stopped" sensor in HomeKit that follows it.
import { NotLinkedError } from '../cloud/http/errors.js';
import { describeResend } from '../cloud/registrations/registration-report.js';
import { operateLock } from '../cloud/remote-operate.js';
import type { DeliveryFeed } from '../model/delivery-state.js';
import { deliveryMessage } from '../status/delivery-messages.js';
import { DeliveryWatch } from '../status/delivery-watch.js';
import type { SelfCheckWatch } from '../status/self-check-watch.js';
import { systemClock } from '../util/clock.js';
import type { Files, Link, PluginContext } from './link-stage.js';
import type { Listener } from './listener-stage.js';

export interface Delivery {
  /** Checks now, whatever the quiet time (e.g. after the public address changed). */
  checkNow(): Promise<void>;
  /** The way in failed or dropped: "not arriving" at once when it cannot be built, else a check now. */
  wayInChanged(): void;
}

export interface DeliveryParts {
  selfChecks: Pick<SelfCheckWatch, 'runNow' | 'last'>;
  /** Shows the delivery state in HomeKit (the sensor), or removes the sensor when there is none. */
  showSensor(feed: DeliveryFeed | undefined): { dispose(): void };
}

/** Starts the watch (unless webhook.deliveryCheckMinutes is 0) and serves, or removes, its sensor. */
export function watchDelivery({ config, log, shutdown }: PluginContext, files: Files, link: Link, listener: Listener, parts: DeliveryParts): Delivery {
  const { registry } = listener;
  const { control, publisher } = link;
  const periodMs = config.webhook.deliveryCheckMinutes * 60_000;
  const linked = () => link.tokens.state === 'linked' && !control.idle;
  // The status as this run started: the last callbacks of the run before, for "since when".
  const lastHeard = Math.max(0, ...Object.values(files.status.status.receiver.lastCallbacks).map((callback) => callback.at));
  const watch = periodMs <= 0
    ? undefined
    : new DeliveryWatch({
      periodMs,
      clock: systemClock,
      log,
      ...(lastHeard > 0 ? { lastHeardAt: lastHeard } : {}),
      locks: () => registry.lockIds(),
      nameOf: (lockId) => registry.nameOf('lock', lockId),
      askStatus: async (lockId) => {
        if (!linked()) throw new NotLinkedError('the account is not linked');
        await operateLock(link.client, lockId, 'status');
      },
      registerAgain: async (reason) => {
        const registrar = linked() ? control.registrar : undefined;
        if (!registrar) return deliveryMessage('deliveryCheck.registrations.notLinked');
        const report = await registrar.sendAllAgain(reason);
        publisher.registrations(registrar.status());
        return describeResend(report);
      },
      selfCheck: async () => {
        if (listener.receiver === undefined) return deliveryMessage('deliveryCheck.selfCheck.noListener');
        if (link.address.publicUrl === undefined) return deliveryMessage('deliveryCheck.selfCheck.noAddress');
        await parts.selfChecks.runNow();
        const last = parts.selfChecks.last;
        if (last === undefined) return deliveryMessage('deliveryCheck.selfCheck.noResult');
        return deliveryMessage(last.ok ? 'deliveryCheck.selfCheck.passes' : 'deliveryCheck.selfCheck.fails', { result: last.message });
      },
      publish: (record) => {
        publisher.update({ delivery: record });
      },
    });
  const sensor = parts.showSensor(config.webhook.deliverySensor ? watch : undefined);
  shutdown.on('halt', () => {
    sensor.dispose();
  });
  if (watch === undefined) return { checkNow: () => Promise.resolve(), wayInChanged: () => undefined };
  let previous = watch.state;
  watch.onChange((state) => {
    // Not arriving: events may be lost. Arriving again: the retries of the gap come now, and a door
    // position among them is old news however new its delivery (the guard trusts only later ones).
    if (state === 'notArriving' || previous === 'notArriving') for (const lock of registry.locks()) lock.eventsMayBeMissed();
    previous = state;
  });
  listener.heard.follow((key) => {
    watch.heard(() => describeKey(key, (kind, id) => registry.nameOf(kind, id)));
  });
  watch.start();
  shutdown.on('halt', () => {
    watch.stop();
  });
  const wayInChanged = (): void => {
    const broken = listener.receiver === undefined ? deliveryMessage('deliveryCheck.noListener') : link.address.brokenWayIn;
    if (broken === undefined) void watch.checkNow();
    else watch.cannotArrive(broken);
  };
  link.address.wayInLost.follow(wayInChanged);
  // The way in may have failed before the watch existed: nothing can arrive, so say so from the start.
  if (listener.receiver === undefined || link.address.brokenWayIn !== undefined) wayInChanged();
  return { checkNow: () => watch.checkNow(), wayInChanged };
}

/** "a callback for Front Door" from `lock:ID`. */
function describeKey(key: string, nameOf: (kind: 'lock' | 'doorbell', id: string) => string): string {
  const [kind, ...rest] = key.split(':');
  const id = rest.join(':');
  if (kind === 'lock' || kind === 'doorbell') return `a callback for ${nameOf(kind, id)}`;
  return 'a callback for the account';
}
