// @ts-check
// "Remove account" on an extra account's row: a confirmation in the card (role alertdialog, the
// keyboard taken to its safe choice, Escape cancels) that says what happens, including to the
// shared devices the account owns. Confirmed, the account is unlinked as "Unlink account" does it
// (its shared devices handed over first, then its registrations and tokens deleted), and only then
// its entry leaves `accounts` through changeConfig; an unlink that left something at the service
// keeps the entry, so the account can be unlinked again.
import { accountName, accountRequest } from './account-list.js';
import { handoverWords, leftList } from './accounts-view.js';
import { changeConfig } from './config-block.js';
import { $, busy, say } from './dom.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';
import { call } from './requests.js';

/** @typedef {import('../../types/page.js').LinkAnswer} LinkAnswer */

/** The account the confirmation asks about, and the row button that opened it (the keyboard goes back there). */
let asking = { id: '', opener: /** @type {HTMLElement | undefined} */ (undefined) };

/** @param {string} id @param {HTMLElement} opener */
function ask(id, opener) {
  asking = { id, opener };
  const name = accountName(id);
  $('remove-account-title').textContent = t('accounts.removeTitle', { name, id });
  $('remove-account-text').textContent = [t('accounts.removeWhat'), handoverWords(id)].filter((words) => words !== '').join(' ');
  $('remove-account-confirm').textContent = t('accounts.removeConfirm', { name });
  $('remove-account-dialog').hidden = false;
  $('remove-account-cancel').focus();
}

function cancel() {
  $('remove-account-dialog').hidden = true;
  asking.opener?.focus();
}

/**
 * Entries naming the removed account as a device's owner lose that name: the owner rule would pass
 * over it anyway, and the config keeps no word about an account it no longer has.
 * @param {unknown} entries
 * @param {string} id
 */
function withoutOwner(entries, id) {
  if (!Array.isArray(entries)) return entries;
  return entries.map((entry) => {
    if (typeof entry !== 'object' || entry === null || /** @type {Record<string, unknown>} */ (entry).account !== id) return entry;
    const { account: _gone, ...rest } = /** @type {Record<string, unknown>} */ (entry);
    return rest;
  });
}

/**
 * @template {Record<string, unknown>} T
 * @param {T} block the main block or an entry of `accounts`
 * @param {string} id
 * @returns {T}
 */
function withoutOwners(block, id) {
  const copy = { ...block };
  for (const field of ['locks', 'doorbells']) if (Array.isArray(copy[field])) /** @type {Record<string, unknown>} */ (copy)[field] = withoutOwner(copy[field], id);
  return copy;
}

/** @param {() => void} redraw draws the rows and device groups again */
async function remove(redraw) {
  const { id } = asking;
  const name = accountName(id);
  $('remove-account-dialog').hidden = true;
  say('account-result', t('accounts.removing', { name }), 'info');
  /** @type {LinkAnswer | undefined} */
  const answer = await call('/unlink', accountRequest(id), 'account-result');
  if (!answer) {
    asking.opener?.focus();
    return;
  }
  const words = [answer.message, ...(answer.notes ?? [])].map(showMessage).join(' ');
  const left = answer.left ?? [];
  if (left.length > 0 || answer.saved === false) {
    say('account-result', `${t('accounts.notRemoved', { name })} ${words}`, 'error');
    $('account-result').append(leftList(left, 'remove-left'));
    asking.opener?.focus();
    return;
  }
  const accepted = await changeConfig((draft) => {
    const entries = Array.isArray(draft.accounts) ? draft.accounts : [];
    const kept = entries.filter((entry) => entry.id !== id).map((entry) => withoutOwners(entry, id));
    Object.assign(draft, withoutOwners(draft, id));
    if (kept.length > 0) draft.accounts = kept;
    else delete draft.accounts;
  }, 'account-result');
  if (!accepted) return;
  say('account-result', `${t('accounts.removed', { name })} ${words}`, 'ok');
  redraw();
  $('add-account').focus();
}

/** @param {() => void} redraw draws the rows and device groups again once an account is removed */
export function wireRemoveAccount(redraw) {
  // The rows are redrawn at times: one listener on the table serves every row's button.
  $('accounts').addEventListener('click', (event) => {
    const button = event.target instanceof window.Element ? event.target.closest('button[data-action="remove"]') : null;
    const id = button instanceof window.HTMLElement ? button.closest('tr')?.dataset.account : undefined;
    if (button instanceof window.HTMLElement && id !== undefined) ask(id, button);
  });
  $('remove-account-cancel').addEventListener('click', cancel);
  $('remove-account-dialog').addEventListener('keydown', (event) => {
    if (event.key === 'Escape') cancel();
  });
  $('remove-account-confirm').addEventListener('click', (event) => busy(event.currentTarget, () => remove(redraw)));
}
