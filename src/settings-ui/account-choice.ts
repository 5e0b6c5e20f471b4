// Which of the block's accounts a settings-page request means: the main account (id `main`, the
// block's own fields) or an entry of `accounts`, by its id. An entry's API key and client, when it
// leaves them out, are the block's; its seeds are its own only. Unsaved edits from the page win over
// the saved config, as for the main account. Each account keeps its tokens in its own folder.
import { ACCOUNT_ID_PATTERN, MAIN_ACCOUNT_ID } from '../config/fields.js';
import { nonEmpty, resolveAccount, type Account } from './account-input.js';
import { serverMessage } from './server-messages.js';
import { UiError } from './ui-error.js';

const ACCOUNT_ID = new RegExp(ACCOUNT_ID_PATTERN);
const OWN_FIELDS = ['apiKey', 'clientId', 'clientSecret'] as const;

/** An account with the id its routes and storage use, and the name the page shows. */
export interface ChosenAccount extends Account {
  id: string;
  name: string;
}

const record = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {});

/** Whether `value` is an extra account's id (the config's pattern, not `main`). */
export function isExtraAccountId(value: unknown): value is string {
  return typeof value === 'string' && ACCOUNT_ID.test(value) && value !== MAIN_ACCOUNT_ID;
}

/** The account id a request names (`main` when it names none); anything else is refused. */
export function accountIdOf(input: unknown): string {
  if (input === undefined || input === null || input === '') return MAIN_ACCOUNT_ID;
  if (typeof input !== 'string' || !ACCOUNT_ID.test(input)) throw new UiError(serverMessage('server.account.badId'));
  return input;
}

function entryOf(list: unknown, id: string): Record<string, unknown> | undefined {
  if (!Array.isArray(list)) return undefined;
  return list.map(record).find((entry) => entry.id === id);
}

/**
 * The account `id` from the page's edits (`input`: the block's fields; `entryInput`: the entry's own)
 * over the saved block (pure); throws a UiError naming what is missing.
 */
export function resolveAccountById(id: string, input: unknown, entryInput: unknown, saved: Record<string, unknown>): ChosenAccount {
  if (id === MAIN_ACCOUNT_ID) return { ...resolveAccount(input, saved), id, name: nonEmpty(saved.name) ?? 'Lock Access' };
  const savedEntry = entryOf(saved.accounts, id);
  const edits = record(entryInput);
  if (!savedEntry && Object.keys(edits).length === 0) throw new UiError(serverMessage('server.account.unknown', { id }));
  const own: Record<string, string> = {};
  for (const key of OWN_FIELDS) {
    const value = nonEmpty(edits[key]) ?? nonEmpty(savedEntry?.[key]);
    if (value !== undefined) own[key] = value;
  }
  // The block's addresses, the entry's credentials where it has them, and only the entry's seeds.
  const forEntry: Record<string, unknown> = { ...saved, refreshToken: savedEntry?.refreshToken, accessToken: savedEntry?.accessToken };
  const account = resolveAccount({ ...record(input), ...own }, forEntry);
  return { ...account, id, name: nonEmpty(edits.name) ?? nonEmpty(savedEntry?.name) ?? id };
}


/** The address the account's callbacks come to: the public address, plus `/a/<id>` for another account. */
export function accountPublicUrl(publicUrl: string | undefined, id: string): string | undefined {
  if (publicUrl === undefined || id === MAIN_ACCOUNT_ID) return publicUrl;
  return `${publicUrl.replace(/\/+$/, '')}/a/${id}`;
}
