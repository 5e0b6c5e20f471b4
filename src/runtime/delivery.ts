// Wires the delivery watch (src/status/delivery-watch.ts) to the running plugin: which locks it may
// ask, the status request, the registrar's full re-send, the self-check, the status file, and the
// "Lock Access Events Stopped" sensor in HomeKit that follows it.
import type { API, PlatformAccessory } from 'homebridge';

import type { ApiClient } from '../cloud/http/api.js';
import type { Registrar } from '../cloud/link-control.js';
import { describeResend } from '../cloud/registrations/registration-report.js';
import { operateLock } from '../cloud/remote-operate.js';
import type { LockAccessConfig } from '../config.js';
import { DeliverySensor } from '../homekit/delivery-sensor.js';
import { DeliveryWatch } from '../status/delivery-watch.js';
import type { SelfCheckWatch } from '../status/self-check-watch.js';
import type { StatusPublisher } from '../status/status-publisher.js';
import type { Status } from '../status/status.js';
import { systemClock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

export interface DeliveryDeps {
  api: API;
  log: Logger;
  config: LockAccessConfig;
  pluginName: string;
  platformName: string;
  /** The "Lock Access" accessory cached from the last run. */
  cached: PlatformAccessory | undefined;
  client: ApiClient;
  locks(): string[];
  nameOf(kind: 'lock' | 'doorbell', id: string): string;
  /** The registrar while linked; undefined while unlinked. */
  registrar(): Pick<Registrar, 'sendAllAgain' | 'status'> | undefined;
  linked(): boolean;
  /** The self-check needs the listener running. */
  listening(): boolean;
  /** The address the service calls; undefined while a tunnel has not connected. */
  publicUrl(): string | undefined;
  /** Why no callback can arrive now (the tunnel failed), in words; undefined otherwise. */
  brokenWayIn(): string | undefined;
  selfCheckWatch(): SelfCheckWatch;
  publisher: StatusPublisher;
  /** Events are not arriving, or arrive again after that: some may have been lost (the guard trusts only door positions that happened after this). */
  eventsMayBeMissed(): void;
  /** The status as this run started: the last callbacks of the run before, for "since when". */
  status: Status;
}

export interface Delivery {
  /** A verified callback arrived for this device key (`lock:ID`, `doorbell:ID`, `user`). */
  heard(key: string): void;
  /** Checks now, whatever the quiet time (e.g. after the public address changed). */
  checkNow(): Promise<void>;
  /** The way in failed or dropped: "not arriving" at once when it cannot be built, else a check now. */
  wayInChanged(): void;
  stop(): void;
}

const NOT_LINKED = 'the account is not linked';

/** Starts the watch (unless webhook.deliveryCheckMinutes is 0) and serves, or removes, its sensor. */
export function startDelivery(deps: DeliveryDeps): Delivery {
  const { api, log, config, publisher } = deps;
  const periodMs = config.webhook.deliveryCheckMinutes * 60_000;
  const lastHeard = Math.max(0, ...Object.values(deps.status.receiver.lastCallbacks).map((callback) => callback.at));
  const watch = periodMs <= 0
    ? undefined
    : new DeliveryWatch({
      periodMs,
      clock: systemClock,
      log,
      ...(lastHeard > 0 ? { lastHeardAt: lastHeard } : {}),
      locks: () => deps.locks(),
      nameOf: (lockId) => deps.nameOf('lock', lockId),
      askStatus: async (lockId) => {
        if (!deps.linked()) throw new Error(NOT_LINKED);
        await operateLock(deps.client, lockId, 'status');
      },
      registerAgain: async (reason) => {
        const registrar = deps.linked() ? deps.registrar() : undefined;
        if (!registrar) return `the webhook registrations could not be sent again: ${NOT_LINKED}`;
        const report = await registrar.sendAllAgain(reason);
        publisher.registrations(registrar.status());
        return describeResend(report);
      },
      selfCheck: async () => {
        if (!deps.listening()) return 'the public address self-check could not run: the webhook listener is not running';
        if (deps.publicUrl() === undefined) return 'the public address self-check could not run: the tunnel has not connected, so there is no public address (its error is in the log above)';
        const checks = deps.selfCheckWatch();
        await checks.runNow();
        const last = checks.last;
        if (last === undefined) return 'the public address self-check gave no result';
        const message = last.message.replace(/\.$/, '');
        return last.ok ? `the public address self-check passes (${message})` : `the public address self-check fails: ${message}`;
      },
      publish: (record) => {
        publisher.update({ delivery: record });
      },
    });
  const sensor = DeliverySensor.attach({
    api,
    log,
    pluginName: deps.pluginName,
    platformName: deps.platformName,
    cached: deps.cached,
    feed: config.webhook.deliverySensor ? watch : undefined,
  });
  let previous = watch?.state;
  watch?.onChange((state) => {
    // Not arriving: events may be lost. Arriving again: the retries of the gap come now, and a door
    // position among them is old news however new its delivery.
    if (state === 'notArriving' || previous === 'notArriving') deps.eventsMayBeMissed();
    previous = state;
  });
  watch?.start();
  // The way in may have failed before the watch existed: nothing can arrive, so say so from the start.
  const wayInChanged = (): void => {
    const broken = deps.listening() ? deps.brokenWayIn() : 'the webhook listener did not start (its error is in the log above).';
    if (broken === undefined) void watch?.checkNow();
    else watch?.cannotArrive(broken);
  };
  if (!deps.listening() || deps.brokenWayIn() !== undefined) wayInChanged();
  return {
    heard: (key) => {
      watch?.heard(() => describeKey(key, (kind, id) => deps.nameOf(kind, id)));
    },
    checkNow: async () => {
      await watch?.checkNow();
    },
    wayInChanged,
    stop: () => {
      watch?.stop();
      sensor?.dispose();
    },
  };
}

/** "a callback for Front Door" from `lock:ID`. */
function describeKey(key: string, nameOf: DeliveryDeps['nameOf']): string {
  const [kind, ...rest] = key.split(':');
  const id = rest.join(':');
  if (kind === 'lock' || kind === 'doorbell') return `a callback for ${nameOf(kind, id)}`;
  return 'a callback for the account';
}
