// An account folder whose entry left `accounts` (config.json edited by hand rather than "Remove
// account" on the settings page): its registrations stay at the service, which keeps calling a path
// that now answers 404. The plugin does not delete them on its own: the entry's own key and client
// went with it, and an entry taken out for a while must not lose its link. It says so once at start.
import { join } from 'node:path';

import { RegistrationLedger } from '../cloud/registrations/registration-ledger.js';
import { ACCOUNT_ID_PATTERN } from '../config/fields.js';
import { ACCOUNTS_FOLDER } from '../settings.js';
import { Storage } from '../storage.js';
import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { accountStorage } from './account-storage.js';

/** `configured`: every id `accounts` names, running or disabled. */
export async function warnDepartedAccounts(root: Storage, configured: ReadonlySet<string>, log: Logger): Promise<void> {
  try {
    const pattern = new RegExp(ACCOUNT_ID_PATTERN);
    const ids = (await new Storage(join(root.dir, ACCOUNTS_FOLDER)).names()).filter((name) => pattern.test(name) && !configured.has(name));
    for (const id of ids.sort()) {
      const ledger = await RegistrationLedger.load(accountStorage(root, id), () => undefined);
      const left = ledger.all().length;
      if (left === 0) continue;
      log.warn(`lock-access/accounts/${id}/ holds ${left === 1 ? '1 webhook registration' : `${String(left)} webhook registrations`} of an account whose entry is no longer in accounts: the service keeps sending its events to a path that now answers 404. Put the entry back (id "${id}"), restart Homebridge, and remove it with Remove account on the settings page, which hands its shared devices over and deletes its registrations.`);
    }
  } catch (error) {
    log.debug(`Could not look for accounts removed from the settings (${errorText(error)}).`);
  }
}
