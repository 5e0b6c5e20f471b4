// Where an account keeps its own files: the main account in the plugin's folder, as it always
// has; an extra account X in `accounts/X/`, everything of its own in one `tokens.json` (its
// tokens, header secret and registrations ledger). The plugin and the settings server both
// find an account's files here.
import { join } from 'node:path';

import { LEDGER_FILE } from '../cloud/registrations/registration-ledger.js';
import { WEBHOOK_SECRET_FILE } from '../cloud/registrations/webhook-secret.js';
import { AccountFileStorage } from '../storage/account-file-storage.js';
import { MAIN_ACCOUNT_ID } from '../config/fields.js';
import { ACCOUNTS_FOLDER } from '../settings.js';
import type { Storage } from '../storage.js';

/** The keys of an extra account's `tokens.json` beside its tokens. */
export const ACCOUNT_FILE_SECTIONS: Readonly<Record<string, string>> = {
  [WEBHOOK_SECRET_FILE]: 'headerSecret',
  [LEDGER_FILE]: 'registrations',
};

export function accountStorage(root: Storage, id: string): Storage {
  return id === MAIN_ACCOUNT_ID ? root : new AccountFileStorage(join(root.dir, ACCOUNTS_FOLDER, id), ACCOUNT_FILE_SECTIONS);
}
