// @ts-check
// "Add account": a form for another account's name, its id (made from the name, checked as the
// config checks it, never changed afterwards: its callback addresses and storage folder are named
// by it) and, only if it has its own, its API key and client. The new entry goes into the block's
// `accounts` through changeConfig, so the plugin's own rules check it first.
import { ACCOUNT_ID, accountList, MAIN } from './account-list.js';
import { focusAccountRow } from './accounts-view.js';
import { changeConfig } from './config-block.js';
import { $, busy, say } from './dom.js';
import { t } from './i18n.js';

/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ ($(id));
const FIELDS = ['new-account-name', 'new-account-id', 'new-account-apiKey', 'new-account-clientId', 'new-account-clientSecret'];

/** Whether the id field still follows the name (until the user types an id of their own). */
let idFollowsName = true;

/**
 * An unused id made from a name: lowercase letters, digits and dashes, at most 32.
 * @param {string} name
 */
export function idFromName(name) {
  const base = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 32) || 'account';
  const used = new Set(accountList().map((a) => a.id));
  for (let n = 1; ; n += 1) {
    const suffix = n === 1 ? '' : `-${n}`;
    const id = `${base.slice(0, 32 - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!used.has(id)) return id;
  }
}

/**
 * What is wrong with a new account's id, in words ('' when nothing): the config's pattern, `main`
 * reserved, unique.
 * @param {string} id
 */
export function idProblem(id) {
  if (id === MAIN) return t('accounts.idMain');
  if (!ACCOUNT_ID.test(id)) return t('accounts.idInvalid');
  if (accountList().some((a) => a.id === id)) return t('accounts.idTaken', { id });
  return '';
}

/**
 * Marks a field of the form as refused (or clears it), its message read with it.
 * @param {string} field
 * @param {string} problem
 */
function mark(field, problem) {
  const node = input(field);
  const box = $(`${field}-problem`);
  box.textContent = problem;
  box.hidden = problem === '';
  node.classList.toggle('is-invalid', problem !== '');
  if (problem === '') node.removeAttribute('aria-invalid');
  else node.setAttribute('aria-invalid', 'true');
}

/** @param {boolean} open */
function showForm(open) {
  $('add-account-form').hidden = !open;
  $('add-account').setAttribute('aria-expanded', String(open));
  if (!open) {
    for (const field of FIELDS) input(field).value = '';
    mark('new-account-name', '');
    mark('new-account-id', '');
    idFollowsName = true;
    return;
  }
  input('new-account-name').focus();
}

/** @param {() => void} redraw draws the rows and device groups again */
async function addAccount(redraw) {
  const name = input('new-account-name').value.trim();
  const id = input('new-account-id').value.trim();
  mark('new-account-name', name === '' ? t('accounts.nameMissing') : '');
  mark('new-account-id', idProblem(id));
  if (name === '' || idProblem(id) !== '') {
    input(name === '' ? 'new-account-name' : 'new-account-id').focus();
    return;
  }
  /** @type {{ id: string; name: string; apiKey?: string; clientId?: string; clientSecret?: string }} */
  const entry = { id, name };
  for (const key of /** @type {const} */ (['apiKey', 'clientId', 'clientSecret'])) {
    const value = input(`new-account-${key}`).value.trim();
    if (value !== '') entry[key] = value;
  }
  const accepted = await changeConfig((draft) => {
    draft.accounts = [...(Array.isArray(draft.accounts) ? draft.accounts : []), entry];
  }, 'account-result');
  if (!accepted) return;
  showForm(false);
  say('account-result', t('accounts.added', { name }), 'ok');
  redraw();
  // The keyboard goes on to the new row's "Link account".
  focusAccountRow(id);
}

/** @param {() => void} redraw draws the rows and device groups again once an account is added */
export function wireAddAccount(redraw) {
  $('add-account').addEventListener('click', () => { showForm($('add-account-form').hidden); });
  $('new-account-cancel').addEventListener('click', () => {
    showForm(false);
    $('add-account').focus();
  });
  $('add-account-form').addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    showForm(false);
    $('add-account').focus();
  });
  input('new-account-name').addEventListener('input', () => {
    if (idFollowsName) input('new-account-id').value = idFromName(input('new-account-name').value.trim());
  });
  input('new-account-id').addEventListener('input', () => {
    idFollowsName = input('new-account-id').value === '';
    mark('new-account-id', '');
  });
  $('new-account-add').addEventListener('click', (event) => busy(event.currentTarget, () => addAccount(redraw)));
}
