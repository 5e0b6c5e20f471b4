// @ts-check
// The account rows of the Account card: one per account, the main account first, each with its
// name, id, link badge and "Link account" (points the link steps below at it), "Test connection",
// "Unlink account" (two clicks) and, for an extra account, "Remove account" (account-remove.js). Rows are redrawn only when the accounts change, so focus stays
// where the keyboard left it; badges are updated in place.
import { accountLink, accountList, accountName, accountRequest, handedOverBy, linkTargetId, MAIN, setLinkTarget, severalAccounts } from './account-list.js';
import { $, busy, el, say } from './dom.js';
import { list } from './format.js';
import { t } from './i18n.js';
import { registrationWords, showMessage } from './messages.js';
import { call } from './requests.js';

/** @typedef {import('../../types/page.js').LinkAnswer} LinkAnswer */
/** @typedef {import('../../types/page.js').LeftRegistration} LeftRegistration */
/** @typedef {import('./account-list.js').PageAccount} PageAccount */

/** The badge colour per state; the words are the catalog's status.link.<state>. @type {Record<string, string>} */
const BADGE_COLOURS = { linked: 'bg-success', unlinked: 'bg-secondary', reauthorizationNeeded: 'bg-danger', notConfigured: 'bg-secondary', checkSettings: 'bg-danger', disabled: 'bg-dark', notArriving: 'bg-danger', waiting: 'bg-warning text-dark' };
const ARMED_MS = 5000;

let drawnKey = '';
/** Unlink buttons waiting for their second click, by account id. @type {Map<string, ReturnType<typeof setTimeout>>} */
const armed = new Map();
/** Device names by "kind:id", from the plugin's status. @type {Map<string, string>} */
let deviceNames = new Map();

/** @param {Map<string, string>} names */
export function setAccountDeviceNames(names) {
  deviceNames = names;
}

/** @param {string} id */
const rowId = (id) => `account-row-${id}`;

/**
 * An action's answer in the card's result line, named by its account when there are several.
 * @param {string} id
 * @param {string} message
 * @param {'error' | 'ok' | 'info'} kind
 */
function sayFor(id, message, kind) {
  say('account-result', id === MAIN ? message : t('accounts.resultFor', { name: accountName(id), message }), kind);
}

/** Points the link steps at an account and takes the keyboard there. @param {string} id */
function chooseLink(id) {
  setLinkTarget(id);
  showLinkTarget();
  $('oauth-start').focus();
}

/** The line above the link steps that says which account they link (when there are several). */
export function showLinkTarget() {
  const line = $('link-target');
  line.hidden = !severalAccounts();
  const target = linkTargetId();
  line.textContent = t('accounts.linkTarget', { name: accountName(target), id: target });
}

/**
 * @param {string} id
 * @param {() => Promise<void>} refresh
 */
async function testConnection(id, refresh) {
  sayFor(id, t('account.testing'), 'info');
  /** @type {LinkAnswer | undefined} */
  const answer = await call('/test-connection', accountRequest(id), 'account-result');
  if (answer) sayFor(id, showMessage(answer.message), answer.ok ? 'ok' : 'error');
  await refresh();
}

/**
 * The registrations an unlink could not delete, each in the page's words with why.
 * @param {LeftRegistration[]} left
 * @param {string} id the list's element id
 */
export function leftList(left, id) {
  return el('ul', { class: 'mb-0 ps-3', id },
    ...left.map((row) => el('li', { 'data-kind': row.kind, 'data-id': row.id, text: t('account.unlinkLeft', { scope: registrationWords(row.kind, deviceNames.get(`${row.kind}:${row.id}`) ?? row.id), error: showMessage(row.reason) }) })));
}

/** What unlinking `id` does to the shared devices it owns, in one sentence; '' when it owns none. @param {string} id */
export function handoverWords(id) {
  const going = handedOverBy(id);
  if (going.length === 0) return '';
  const next = [...new Set(going.map((g) => g.next))];
  const devices = list(going.map((g) => deviceNames.get(`${g.kind}:${g.deviceId}`) ?? g.deviceId));
  return t('accounts.unlinkShared', { account: accountName(id), devices, next: list(next.map(accountName)) });
}

/**
 * Two clicks instead of a dialog: a dialog inside the settings iframe is easy to miss. The first
 * says what happens to the shared devices the account owns.
 * @param {HTMLButtonElement} button
 * @param {string} id
 * @param {() => Promise<void>} refresh
 */
function unlinkClicked(button, id, refresh) {
  const waiting = armed.get(id);
  if (waiting === undefined) {
    button.textContent = t('account.unlinkConfirm');
    const shared = handoverWords(id);
    if (shared !== '') say('account-result', shared, 'info');
    armed.set(id, setTimeout(() => {
      armed.delete(id);
      button.textContent = t('account.unlink');
    }, ARMED_MS));
    return;
  }
  clearTimeout(waiting);
  armed.delete(id);
  button.textContent = t('account.unlink');
  void busy(button, async () => {
    sayFor(id, t('account.unlinking'), 'info');
    /** @type {LinkAnswer | undefined} */
    const answer = await call('/unlink', accountRequest(id), 'account-result');
    if (!answer) return;
    // Registrations the unlink could not delete are named, each with its reason.
    const left = answer.left ?? [];
    sayFor(id, [answer.message, ...(answer.notes ?? [])].map(showMessage).join(' '), left.length > 0 ? 'error' : 'ok');
    if (left.length > 0) $('account-result').append(leftList(left, 'unlink-left'));
    await refresh();
  });
}

/**
 * @param {PageAccount} a
 * @param {() => Promise<void>} refresh
 */
function accountRow(a, refresh) {
  const nameId = `account-name-${a.id}`;
  // The main account's buttons keep the ids the page had before it had rows.
  const unlink = el('button', { type: 'button', class: 'btn btn-sm btn-outline-danger', 'data-action': 'unlink', id: a.main ? 'unlink' : `unlink-${a.id}`, 'aria-describedby': nameId, text: t('account.unlink') });
  unlink.addEventListener('click', () => { unlinkClicked(unlink, a.id, refresh); });
  return el('tr', { id: rowId(a.id), 'data-account': a.id },
    el('th', { scope: 'row', id: nameId, text: a.name }),
    el('td', {}, el('code', { text: a.id })),
    el('td', {}, el('span', { class: 'badge bg-secondary', 'data-role': 'badge', text: '…' }), el('div', { class: 'small', 'data-role': 'message' })),
    el('td', {}, el('div', { class: 'd-flex flex-wrap gap-1' },
      el('button', { type: 'button', class: 'btn btn-sm btn-outline-primary', 'data-action': 'link', 'aria-describedby': nameId, text: t('accounts.linkAccount'),
        onclick: () => { chooseLink(a.id); } }),
      el('button', { type: 'button', class: 'btn btn-sm btn-outline-primary', 'data-action': 'test', id: a.main ? 'test-connection' : `test-connection-${a.id}`, 'aria-describedby': nameId, text: t('account.testConnection'),
        onclick: (event) => busy(event.currentTarget, () => testConnection(a.id, refresh)) }),
      unlink,
      // An extra account can leave the block (account-remove.js answers the click); the main one is the block's own fields.
      a.main ? undefined : el('button', { type: 'button', class: 'btn btn-sm btn-outline-danger', 'data-action': 'remove', id: `remove-${a.id}`, 'aria-describedby': nameId, 'aria-haspopup': 'dialog', 'aria-controls': 'remove-account-dialog', text: t('accounts.remove') }))));
}

/** Each row's badge and message from the last status. */
function updateBadges() {
  for (const a of accountList()) {
    const row = document.getElementById(rowId(a.id));
    const badge = row?.querySelector('[data-role="badge"]');
    if (!row || !(badge instanceof window.HTMLElement)) continue;
    const link = accountLink(a.id);
    badge.textContent = link.state in BADGE_COLOURS ? t(`status.link.${link.state}`) : link.state;
    badge.className = `badge ${BADGE_COLOURS[link.state] ?? 'bg-secondary'}`;
    badge.dataset.state = link.state;
    const message = row.querySelector('[data-role="message"]');
    if (message) message.textContent = link.state === 'notArriving' ? t('accounts.notArriving') : showMessage(link.message);
  }
}

/**
 * Draws the rows when the accounts changed, then the badges.
 * @param {() => Promise<void>} refresh re-reads the status after an action
 */
export function renderAccounts(refresh) {
  const accounts = accountList();
  const key = JSON.stringify(accounts);
  if (key !== drawnKey) {
    drawnKey = key;
    for (const timer of armed.values()) clearTimeout(timer);
    armed.clear();
    $('accounts').querySelector('tbody')?.replaceChildren(...accounts.map((a) => accountRow(a, refresh)));
    showLinkTarget();
  }
  updateBadges();
}

/** @param {string} id the row whose "Link account" button takes the keyboard */
export function focusAccountRow(id) {
  document.getElementById(rowId(id))?.querySelector('button')?.focus();
}
