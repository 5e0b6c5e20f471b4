// Wires the event router: each routed event goes to its device, the status file and the event log;
// membership changes to the account's convergence; an account deletion unlinks.
import { EventRouter } from '../callbacks/event-router.js';
import type { LinkControl } from '../cloud/link-control.js';
import type { DeviceRegistry } from '../model/device-registry.js';
import type { StatusPublisher } from '../status/status-publisher.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import type { Convergence } from './converge-with-account.js';

export interface EventRoutingDeps {
  registry: DeviceRegistry;
  publisher: StatusPublisher;
  link: LinkControl;
  log: Logger;
  /** The log for lines written per event, held to a household pace. */
  eventLines: Logger;
  convergence: () => Convergence | undefined;
}

export function routeEvents({ registry, publisher, link, log, eventLines, convergence }: EventRoutingDeps): EventRouter {
  return new EventRouter({
    lock: (id) => registry.lock(id),
    doorbell: (id) => registry.doorbell(id),
    nameOf: (kind, id) => registry.nameOf(kind, id),
    log: eventLines,
    record: (routed) => {
      publisher.record(routed);
    },
    membershipChanged: (lockId, change, userId) => {
      convergence()?.membershipChanged(lockId, change, userId);
    },
    accountDeleted: () => {
      // Nobody awaits this: a failure (the token file could not be deleted) is logged, never left unhandled.
      link.unlink('the Lock Access account was deleted').catch((error: unknown) => {
        log.error(`Lock Access could not finish unlinking (${errorText(error)}); unlink it again in the plugin settings.`);
      });
    },
    routed: () => {
      publisher.receiverStats();
    },
    isIdle: () => link.idle,
  });
}
