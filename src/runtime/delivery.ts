// Wires the delivery watches (src/status/delivery-watch.ts) to the running plugin: one per account
// (accounts/account-delivery.ts: its own locks, its own token, its own registrations), each
// hearing the verified callbacks on its own paths, the shared self-check, the status file, and the
// one "Lock Access Events Stopped" sensor in HomeKit, open while any account is not arriving.
import { accountDeliveryWatch } from '../accounts/account-delivery.js';
import type { AccountUnit } from '../accounts/account-unit.js';
import type { DeliveryFeed } from '../model/delivery-state.js';
import { anyNotArriving, oneAtATime } from '../status/delivery-feeds.js';
import { deliveryMessage } from '../status/delivery-messages.js';
import type { DeliveryEntry } from '../status/delivery-shape.js';
import type { DeliveryWatch } from '../status/delivery-watch.js';
import type { SelfCheckWatch } from '../status/self-check-watch.js';
import type { UiMessage } from '../util/ui-message.js';
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

/** Starts the watches (unless webhook.deliveryCheckMinutes is 0) and serves, or removes, their sensor. */
export function watchDelivery({ config, log, shutdown }: PluginContext, files: Files, link: Link, listener: Listener, parts: DeliveryParts): Delivery {
  const { registry, accounts } = listener;
  const periodMs = config.webhook.deliveryCheckMinutes * 60_000;
  // Each account with where its watch publishes: the main account's in the status file's own
  // fields, an extra account's in its entry under `accounts`.
  const units: readonly { unit: AccountUnit; publish: (record: DeliveryEntry) => void }[] = [
    { unit: link.main, publish: (record) => {
      link.publisher.update({ delivery: record });
    } },
    ...link.extras.map((unit) => ({ unit, publish: (record: DeliveryEntry) => {
      unit.entry.delivery(record);
    } })),
  ];
  const before = files.status.status;
  // The status as this run started: the last callbacks of the run before, for "since when".
  const lastHeard = (unit: AccountUnit) => (unit.account.main
    ? Math.max(0, ...Object.values(before.receiver.lastCallbacks).map((callback) => callback.at)) || undefined
    : before.accounts?.[unit.account.id]?.delivery?.lastHeardAt);
  const turn = oneAtATime();
  const watches = new Map<string, DeliveryWatch>(periodMs <= 0 ? [] : units.map(({ unit, publish }) => {
    return [unit.account.id, accountDeliveryWatch(unit, {
      periodMs, log, several: units.length > 1, accounts, registry, turn, lastHeardAt: lastHeard(unit),
      selfCheck: () => shownSelfCheck(link, listener, parts.selfChecks),
      publish,
      resent: ({ account, control }) => {
        if (account.main && control.registrar !== undefined) link.publisher.registrations(control.registrar.status());
      },
    })];
  }));
  const all = [...watches.values()];
  const feed = all.length > 1 ? anyNotArriving(all) : all[0];
  const sensor = parts.showSensor(config.webhook.deliverySensor ? feed : undefined);
  shutdown.on('halt', () => {
    sensor.dispose();
  });
  if (all.length === 0) return { checkNow: () => Promise.resolve(), wayInChanged: () => undefined };
  for (const [id, watch] of watches) {
    let previous = watch.state;
    watch.onChange((state) => {
      // Not arriving: events may be lost. Arriving again: the retries of the gap come now, and a door
      // position among them is old news however new its delivery (the guard trusts only later ones).
      if (state === 'notArriving' || previous === 'notArriving') {
        const locks = accounts.holdings === undefined ? registry.lockIds() : accounts.holdings.owned(id, 'lock');
        for (const lockId of locks) registry.lock(lockId)?.eventsMayBeMissed();
      }
      previous = state;
    });
    watch.start();
    shutdown.on('halt', () => {
      watch.stop();
    });
  }
  listener.heard.follow((key, account) => {
    watches.get(account ?? link.main.account.id)?.heard(() => describeKey(key, (kind, id) => registry.nameOf(kind, id)));
  });
  const checkAll = () => Promise.all(all.map((watch) => watch.checkNow())).then(() => undefined);
  const wayInChanged = (): void => {
    const broken = listener.receiver === undefined ? deliveryMessage('deliveryCheck.noListener') : link.address.brokenWayIn;
    if (broken === undefined) void checkAll();
    else for (const watch of all) watch.cannotArrive(broken);
  };
  link.address.wayInLost.follow(wayInChanged);
  // The way in may have failed before the watch existed: nothing can arrive, so say so from the start.
  if (listener.receiver === undefined || link.address.brokenWayIn !== undefined) wayInChanged();
  return { checkNow: checkAll, wayInChanged };
}

/** The shared public-address self-check, in the words of a delivery check. */
async function shownSelfCheck(link: Link, listener: Listener, selfChecks: DeliveryParts['selfChecks']): Promise<UiMessage> {
  if (listener.receiver === undefined) return deliveryMessage('deliveryCheck.selfCheck.noListener');
  if (link.address.publicUrl === undefined) return deliveryMessage('deliveryCheck.selfCheck.noAddress');
  await selfChecks.runNow();
  const last = selfChecks.last;
  if (last === undefined) return deliveryMessage('deliveryCheck.selfCheck.noResult');
  return deliveryMessage(last.ok ? 'deliveryCheck.selfCheck.passes' : 'deliveryCheck.selfCheck.fails', { result: last.message });
}

/** "a callback for Front Door" from `lock:ID`. */
function describeKey(key: string, nameOf: (kind: 'lock' | 'doorbell', id: string) => string): string {
  const [kind, ...rest] = key.split(':');
  const id = rest.join(':');
  if (kind === 'lock' || kind === 'doorbell') return `a callback for ${nameOf(kind, id)}`;
  return 'a callback for the account';
}
