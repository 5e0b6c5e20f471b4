// One account's delivery watch: it probes the locks that account owns, with its own token, and only
// its own registrations are sent again when its callbacks stop arriving. The public address is one
// for every account, so the self-check is shared. Its lines start with the account's name when the
// block has several accounts, so a warning says which account is not arriving.
import { NotLinkedError } from '../cloud/http/errors.js';
import { describeResend } from '../cloud/registrations/registration-report.js';
import { operateLock } from '../cloud/remote-operate.js';
import type { DeviceRegistry } from '../model/device-registry.js';
import type { DeliveryChecks } from '../status/delivery-checks.js';
import { deliveryMessage } from '../status/delivery-messages.js';
import { DeliveryWatch, type DeliveryRecord } from '../status/delivery-watch.js';
import { systemClock } from '../util/clock.js';
import { deviceLogger, type Logger } from '../util/logger.js';
import type { AccountDevices } from './account-devices.js';
import type { AccountUnit } from './account-unit.js';

const NOT_LINKED = 'the account is not linked';

export interface AccountDeliveryDeps {
  periodMs: number;
  /** The plugin's log (an account's lines are named by the unit's log). */
  log: Logger;
  /** The block has extra accounts: the main account's lines name it too. */
  several: boolean;
  accounts: AccountDevices;
  registry: DeviceRegistry;
  /** The last verified callback on this account's paths in the run before, for "since when". */
  lastHeardAt: number | undefined;
  selfCheck: DeliveryChecks['selfCheck'];
  /** Its record in the status file. */
  publish(record: DeliveryRecord): void;
  /** After its registrations were sent again (the main account's are shown in the status file). */
  resent(unit: AccountUnit): void;
  /** Shared by every account's watch: one check at a time. */
  turn: (check: () => Promise<void>) => Promise<void>;
}

export function accountDeliveryWatch(unit: AccountUnit, deps: AccountDeliveryDeps): DeliveryWatch {
  const { accounts, registry } = deps;
  const { control, tokens } = unit;
  const id = unit.account.id;
  const linked = () => tokens.state === 'linked' && !control.idle && !accounts.isStopped(id);
  const log = unit.account.main && deps.several ? deviceLogger(deps.log, () => 'Main account (main)') : unit.log;
  return new DeliveryWatch({
    periodMs: deps.periodMs,
    clock: systemClock,
    log,
    ...(deps.lastHeardAt === undefined ? {} : { lastHeardAt: deps.lastHeardAt }),
    // Its own locks: the owner alone registers a shared lock, so only the owner's path hears it.
    locks: () => (accounts.holdings === undefined ? registry.lockIds() : accounts.holdings.owned(id, 'lock')),
    nameOf: (lockId) => registry.nameOf('lock', lockId),
    askStatus: async (lockId) => {
      if (!linked()) throw new NotLinkedError(NOT_LINKED);
      await operateLock(unit.client, lockId, 'status');
    },
    registerAgain: async (reason) => {
      const registrar = linked() ? control.registrar : undefined;
      if (!registrar) return deliveryMessage('deliveryCheck.registrations.notLinked');
      const report = await registrar.sendAllAgain(reason);
      deps.resent(unit);
      return describeResend(report);
    },
    selfCheck: deps.selfCheck,
    publish: (record) => {
      deps.publish(record);
    },
    turn: deps.turn,
  });
}
