// @ts-check
// The Account card: the account fields of the config block (secrets by their dotted path, such as
// webhook.tunnel.authtoken), linking the account its row chose (OAuth sign-in or a refresh token)
// and "Save settings". The rows with each account's test and unlink are accounts-view.js.
import { accountName, accountRequest, linkTargetId, MAIN } from './account-list.js';
import { block, changeConfig, getPath, pushConfig, setPath } from './config-block.js';
import { $, busy, el, say } from './dom.js';
import { problemSolved } from './field-problems.js';
import { t, tNodes } from './i18n.js';
import { showMessage } from './messages.js';
import { fillReach } from './reach-view.js';
import { call, hb } from './requests.js';

/** @typedef {import('../../types/page.js').LinkAnswer} LinkAnswer */

const REDIRECT_KEY = 'lock-access-redirect-uri';
const DEFAULT_REDIRECT = 'https://localhost/lock-access/linked';

/** @returns {NodeListOf<HTMLInputElement>} */
const fields = () => document.querySelectorAll('input[data-field]');
/** @returns {NodeListOf<HTMLInputElement>} */
const secrets = () => document.querySelectorAll('input[data-secret]');

/** Shows the block's values (a refused value shown before is replaced, so its mark goes too); saved secrets only as "Saved", never their value. */
export function fillAccountForm() {
  const current = block();
  for (const node of [...fields(), ...secrets()]) problemSolved(node);
  for (const node of fields()) {
    const value = getPath(current, node.dataset.field ?? '');
    if (node.dataset.type === 'boolean') node.checked = value === undefined ? node.dataset.default === 'true' : Boolean(value);
    else node.value = value === undefined || value === null ? '' : String(/** @type {string | number} */ (value));
  }
  for (const node of secrets()) {
    const saved = getPath(current, node.dataset.secret ?? '');
    node.value = '';
    node.placeholder = t(typeof saved === 'string' && saved !== '' ? 'account.secretSaved' : 'account.secretNotSet');
  }
  redirectUri().value = localStorage.getItem(REDIRECT_KEY) || DEFAULT_REDIRECT;
  fillReach();
}

function redirectUri() {
  return /** @type {HTMLInputElement} */ ($('redirectUri'));
}

/**
 * Every `data-field` control (also the switches of other cards) writes its value back; a
 * `data-secret` field replaces the saved secret only when something is typed.
 * @param {HTMLInputElement} node
 */
function valueOf(node) {
  if (node.dataset.type === 'boolean') return node.checked;
  if (node.dataset.type === 'number') return node.value === '' ? undefined : Number(node.value);
  return node.value.trim();
}

export function wireAccountForm() {
  for (const node of fields()) {
    node.addEventListener('change', () => {
      // Problems show in the result box of the card the control sits in.
      const box = node.closest('.card')?.querySelector('[id$="-result"]')?.id ?? 'account-result';
      void changeConfig((draft) => { setPath(draft, node.dataset.field ?? '', valueOf(node)); }, box, node);
    });
  }
  for (const node of secrets()) {
    node.addEventListener('change', () => {
      // Empty keeps the saved secret; only a typed value replaces it.
      const value = node.value.trim();
      void changeConfig((draft) => { if (value !== '') setPath(draft, node.dataset.secret ?? '', value); }, 'account-result', node);
    });
  }
  redirectUri().addEventListener('change', () => { localStorage.setItem(REDIRECT_KEY, redirectUri().value.trim()); });
}

/**
 * A linking answer: the message (naming the account when it is not the main one), a toast, and a
 * refresh of the status.
 * @param {string} id
 * @param {LinkAnswer} answer
 * @param {() => Promise<void>} refresh
 */
async function linked(id, answer, refresh) {
  const message = showMessage(answer.message);
  say('account-result', id === MAIN ? message : t('accounts.resultFor', { name: accountName(id), message }), 'ok');
  hb().toast.success(t('account.link.linkedToast'), 'Lock Access');
  await refresh();
}

/** @param {() => Promise<void>} refresh re-reads status and events after a change of the link */
export function wireAccountActions(refresh) {
  $('oauth-start').addEventListener('click', (event) => busy(event.currentTarget, async () => {
    const redirect = redirectUri().value.trim();
    localStorage.setItem(REDIRECT_KEY, redirect);
    /** @type {LinkAnswer | undefined} */
    const answer = await call('/oauth/start', { ...accountRequest(linkTargetId()), redirectUri: redirect }, 'account-result');
    if (!answer?.url) return;
    const link = el('a', { href: answer.url, target: '_blank', rel: 'noopener', id: 'oauth-url', text: t('account.link.signIn') });
    $('oauth-link').replaceChildren(...tNodes('account.link.noNewTab', {}, { link }));
    window.open(answer.url, '_blank', 'noopener');
    say('account-result', t('account.link.allowAccess'), 'info');
  }));

  $('oauth-finish').addEventListener('click', (event) => busy(event.currentTarget, async () => {
    const pasted = /** @type {HTMLInputElement} */ ($('redirectUrl'));
    // The server links the account the address's sign-in was started for.
    const id = linkTargetId();
    /** @type {LinkAnswer | undefined} */
    const answer = await call('/oauth/finish', { ...accountRequest(id), redirectUrl: pasted.value }, 'account-result');
    if (!answer) return;
    pasted.value = '';
    $('oauth-link').replaceChildren();
    await linked(id, answer, refresh);
  }));

  $('link-token').addEventListener('click', (event) => busy(event.currentTarget, async () => {
    const token = /** @type {HTMLInputElement} */ ($('refreshToken'));
    const id = linkTargetId();
    /** @type {LinkAnswer | undefined} */
    const answer = await call('/link/refresh-token', { ...accountRequest(id), refreshToken: token.value }, 'account-result');
    token.value = '';
    if (answer) await linked(id, answer, refresh);
  }));

  $('save').addEventListener('click', (event) => busy(event.currentTarget, async () => {
    if (!await pushConfig('account-result')) return;
    await hb().savePluginConfig();
    hb().toast.success(t('account.savedToast'), 'Lock Access');
    fillAccountForm();
  }));
}
