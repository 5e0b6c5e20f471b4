// The listener stage: the device registry (the model) and the webhook listener whose events apply
// to it. A port in use is logged with what to change and never stops the start.
import { randomBytes } from 'node:crypto';

import { EventRouter } from '../callbacks/event-router.js';
import { startReceiver, type Receiver } from '../callbacks/receiver.js';
import { describeCommandFailure } from '../cloud/command-failure.js';
import { operateLock } from '../cloud/remote-operate.js';
import { peopleOf } from '../config.js';
import { DeviceRegistry } from '../model/device-registry.js';
import { AccountDevices } from '../accounts/account-devices.js';
import { systemClock } from '../util/clock.js';
import { errorText } from '../util/error-text.js';
import { Signal } from '../util/signal.js';
import type { Files, Link, PluginContext } from './link-stage.js';

export interface Listener {
  /** Owns every device; the views attach to it in the next stage. */
  readonly registry: DeviceRegistry;
  /** Applies each acknowledged callback's events to the registry and announces them. */
  readonly router: EventRouter;
  /** Undefined when the listener could not start (the log says why). */
  readonly receiver: Receiver | undefined;
  /** Tells this listener from another behind the same address (the self-check's answer). */
  readonly instanceNonce: string;
  /** A callback passed the signature and header checks: its device key (`lock:ID`, `user`), and the extra account whose path it came on. */
  readonly heard: Signal<[key: string, account: string | undefined]>;
  /** Which account holds and owns each device, and which accounts' paths are open. */
  readonly accounts: AccountDevices;
}

export async function listenerStage(context: PluginContext, files: Files, link: Link): Promise<Listener> {
  const { config, shutdown } = context;
  // Read only once the registry exists: commands go with the client of the device's owner.
  const late: { accounts?: AccountDevices } = {};
  const registry = new DeviceRegistry({
    log: files.eventLines,
    clock: systemClock,
    records: files.records,
    people: peopleOf(config),
    operate: (lockId, action) => operateLock(late.accounts?.clientFor('lock', lockId) ?? link.client, lockId, action),
    // With several accounts the words say which one sent it: its token, bridge or rights may be the problem.
    describeCommandFailure: (error, lockId) => {
      const sender = late.accounts?.extraOwnerLabel('lock', lockId);
      return `${sender === undefined ? '' : `account ${sender}: `}${describeCommandFailure(error)}`;
    },
  });
  const accounts = await AccountDevices.open({ main: link.main, extras: link.extras, registry, storage: files.storage, log: files.eventLines });
  late.accounts = accounts;
  const router = new EventRouter(registry, files.eventLines);
  const heard = new Signal<[key: string, account: string | undefined]>();
  const instanceNonce = randomBytes(16).toString('hex');
  const receiver = await listen(context, files, link, { router, heard, instanceNonce, accounts });
  // After the listener closed, so the events of a callback answered 200 still reach the views and the files.
  shutdown.on('release', () => {
    registry.disposeAll();
    files.eventLines.flush();
  });
  return { registry, router, receiver, instanceNonce, heard, accounts };
}

async function listen({ config, log, shutdown }: PluginContext, files: Files, link: Link, parts: Pick<Listener, 'router' | 'heard' | 'instanceNonce' | 'accounts'>): Promise<Receiver | undefined> {
  const { publisher, control, address } = link;
  const where = `${config.webhook.listenHost}:${config.webhook.listenPort}`;
  // Of the counters the status file shows, a verified callback can change only the duplicates.
  let duplicatesShown = 0;
  try {
    const receiver = await startReceiver({
      webhook: config.webhook,
      apiKey: config.apiKey,
      callbackToken: () => link.secret.token,
      instanceNonce: parts.instanceNonce,
      dedupe: files.dedupe,
      log,
      // Each account's path is verified with that account's key and header secret alone.
      ...(link.extras.length === 0 ? {} : { accounts: (id: string) => parts.accounts.gate(id) }),
      // Unlinked: events are dropped. An extra account's path applies its own devices' events only.
      onEvents: (events, context) => {
        if (context.account === undefined) {
          if (!control.idle) parts.router.route(parts.accounts.ownEvents(events, undefined), context);
          return;
        }
        if (parts.accounts.linked(context.account)) parts.router.route(parts.accounts.ownEvents(events, context.account), context, context.account);
      },
      // Counters, and refusals, reach the status file within seconds.
      onRejected: (stats) => {
        publisher.receiverStats(stats);
      },
      onVerified: (key, stats, account) => {
        if (stats.duplicates !== duplicatesShown) {
          duplicatesShown = stats.duplicates;
          publisher.receiverStats(stats);
        }
        parts.heard.emit(key, account);
      },
    });
    // Stop taking callbacks first: the service sends those refused while closing (503) again later.
    shutdown.on('close', () => receiver.close());
    shutdown.on('release', () => {
      publisher.receiverStats(receiver.stats);
    });
    log.info(`Webhook listener ready on ${config.webhook.listenHost}:${receiver.port}, reachable as ${address.describe()}`);
    files.status.update({ receiver: { listening: true, listenAddress: `${config.webhook.listenHost}:${receiver.port}` } });
    address.listenerReady(receiver.port, receiver.url.startsWith('https:'));
    return receiver;
  } catch (error) {
    log.error(`The webhook listener could not start on ${where} (${errorText(error)}). Choose a free webhook.listenPort in the plugin settings; until then no events arrive.`);
    files.status.update({ receiver: { listening: false } });
    address.listenerFailed();
    return undefined;
  }
}
