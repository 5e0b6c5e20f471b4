// Status files of earlier versions, read as today's: version 1 held plain sentences where version 2
// holds messages. A link sentence the plugin still knows becomes its code again; any other sentence
// becomes a message of the legacy code (no catalog has it), which the page shows as it was written
// until the plugin writes the file again. The `accounts` section, where present, is upgraded alike.
import { messageOfSentence } from '../cloud/link-messages.js';
import { legacyMessage } from '../util/ui-message.js';
import { accountLinkOfSentence } from './account-status.js';
import { STATUS_VERSION } from './status-shape.js';

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `holder[key]`, when a sentence, as a message (in place; the object is the parser's own copy). */
function wrap(holder: unknown, key: string, asMessage = legacyMessage): void {
  if (isObject(holder) && typeof holder[key] === 'string') holder[key] = asMessage(holder[key]);
}

function upgradeDelivery(delivery: unknown): void {
  if (!isObject(delivery)) return;
  wrap(delivery.lastCheck, 'message');
  wrap(delivery.checked, 'registrations');
  wrap(delivery.checked, 'selfCheck');
}

function upgradeAccounts(accounts: unknown): void {
  if (!isObject(accounts)) return;
  for (const account of Object.values(accounts)) {
    if (!isObject(account)) continue;
    wrap(account.link, 'message', accountLinkOfSentence);
    // Version 1 kept only the state here; the account's watch writes the whole entry again.
    if (isObject(account.delivery) && typeof account.delivery.checkEveryMinutes !== 'number') delete account.delivery;
    upgradeDelivery(account.delivery);
  }
}

/** Version 1's sentences as messages; anything else is left for the schema to judge. */
export function upgradeStatus(raw: unknown): unknown {
  if (!isObject(raw) || raw.version !== 1) return raw;
  const file = structuredClone(raw);
  wrap(file.link, 'message', messageOfSentence);
  const selfCheck = file.selfCheck;
  wrap(selfCheck, 'message');
  if (isObject(selfCheck) && Array.isArray(selfCheck.history)) for (const entry of selfCheck.history) wrap(entry, 'message');
  if (isObject(file.publicAddress)) wrap(file.publicAddress.tunnel, 'message');
  upgradeDelivery(file.delivery);
  if (Array.isArray(file.registrations)) for (const row of file.registrations) wrap(row, 'lastError');
  wrap(file.video, 'problem');
  upgradeAccounts(file.accounts);
  file.version = STATUS_VERSION;
  return file;
}
