// @ts-check
// The Devices card: every lock and doorbell the config, the running plugin or "Find my devices"
// knows, each with its options (name in Home, door sensor, motion time, hide), written back to the
// `locks` and `doorbells` entries of the account that owns it. With several accounts the devices
// are listed per account (under their owner), and a shared device names its owner and other holders.
import { accountList, accountName, accountRequest, accountTarget, holdingOf, severalAccounts } from './account-list.js';
import { block, changeConfig, entryFor } from './config-block.js';
import { $, busy, el, inputOf, say } from './dom.js';
import { list } from './format.js';
import { t } from './i18n.js';
import { errorMessage } from './messages.js';
import { hb } from './requests.js';

/** @typedef {import('../../types/page.js').DeviceKind} DeviceKind */
/** @typedef {import('../../types/page.js').DeviceStatus} DeviceStatus */
/** @typedef {import('../../types/page.js').FoundDevices} FoundDevices */
/** @typedef {import('../../types/page.js').ConfigBlock} ConfigBlock */
/** @typedef {{ kind: DeviceKind; id: string; serviceName: string | undefined; sources: Set<string>; found: Set<string>; holders: string[]; owner: string }} DeviceRow */

/** Devices the service listed after "Find my devices", per account. @type {Map<string, FoundDevices>} */
const discovered = new Map();
/** Devices the running plugin reported in its status. @type {DeviceStatus[]} */
let pluginDevices = [];
let lastKey = '';

/** @param {DeviceStatus[]} devices */
export function setPluginDevices(devices) {
  pluginDevices = devices;
}

/**
 * Counts the actions that answer in the devices result line: a change whose check comes back after
 * a newer action began (say "Find my devices") must not cover that action's answer.
 */
let resultTurn = 0;

/**
 * @param {DeviceKind} kind
 * @param {string} id
 * @param {string} key
 * @param {unknown} value undefined, '' and false remove the option
 * @param {Event} event the change event of the option's control
 */
async function changeDevice(kind, id, key, value, event) {
  const turn = ++resultTurn;
  const owner = holdingOf(kind, id, foundBy(kind, id)).owner;
  const accepted = await changeConfig((draft) => {
    const target = accountTarget(draft, owner);
    const entry = target && entryFor(/** @type {ConfigBlock} */ (target), kind, id, true);
    if (!entry) return;
    if (value === undefined || value === '' || value === false) Reflect.deleteProperty(entry, key);
    else entry[key] = value;
  }, 'devices-result', inputOf(event));
  if (accepted && turn === resultTurn) say('devices-result', t('devices.changed'), 'info');
}

/**
 * The accounts whose "Find my devices" listed a device.
 * @param {DeviceKind} kind
 * @param {string} id
 */
function foundBy(kind, id) {
  return [...discovered].filter(([, found]) => (kind === 'lock' ? found.locks : found.doorbells).some((d) => d.id === id)).map(([account]) => account);
}

/** @returns {DeviceRow[]} */
function allDevices() {
  /** @type {Map<string, Omit<DeviceRow, 'holders' | 'owner'>>} */
  const byKey = new Map();
  /** @type {(kind: DeviceKind, id: string, name: string | undefined, source: string) => void} */
  const add = (kind, id, name, source) => {
    const key = `${kind}:${id}`;
    const known = byKey.get(key);
    if (known) {
      known.sources.add(source);
      known.serviceName ??= name;
    } else byKey.set(key, { kind, id, serviceName: name, sources: new Set([source]), found: new Set() });
  };
  for (const a of accountList()) {
    const target = /** @type {ConfigBlock | undefined} */ (accountTarget(block(), a.id));
    for (const e of Array.isArray(target?.locks) ? target.locks : []) add('lock', e.id, undefined, 'config');
    for (const e of Array.isArray(target?.doorbells) ? target.doorbells : []) add('doorbell', e.id, undefined, 'config');
  }
  for (const d of pluginDevices) add(d.kind, d.id, d.source === 'config' ? undefined : d.name, 'plugin');
  for (const [, found] of discovered) {
    for (const d of found.locks) add('lock', d.id, d.name, 'service');
    for (const d of found.doorbells) add('doorbell', d.id, d.name, 'service');
  }
  const order = accountList().map((a) => a.id);
  return [...byKey.values()]
    .map((d) => ({ ...d, ...holdingOf(d.kind, d.id, foundBy(d.kind, d.id)) }))
    .sort((a, b) => order.indexOf(a.owner) - order.indexOf(b.owner) || (a.kind === b.kind ? a.id.localeCompare(b.id) : a.kind === 'lock' ? -1 : 1));
}

/**
 * The owner's entry for a device (its name and options), read-only.
 * @param {DeviceRow} d
 */
function ownEntry(d) {
  const target = /** @type {ConfigBlock | undefined} */ (accountTarget(block(), d.owner));
  return (target && entryFor(target, d.kind, d.id, false)) ?? { id: d.id };
}

/**
 * One of the guard's seconds (empty or 0: off), labelled and checked like every other option.
 * @param {string} id
 * @param {'autoLockSeconds' | 'leftOpenSeconds' | 'leftUnlockedSeconds'} key
 * @param {string} words
 * @param {number} max
 * @param {unknown} value
 * @param {string} title
 */
function guardInput(id, key, words, max, value, title) {
  return el('label', { class: 'd-block mt-1', title },
    `${words} `,
    el('input', { type: 'number', min: 0, max, class: 'form-control form-control-sm d-inline-block la-seconds', 'data-option': key,
      value: typeof value === 'number' ? value : '', placeholder: t('devices.off'),
      onchange: (e) => changeDevice('lock', id, key, inputOf(e).value === '' || inputOf(e).value === '0' ? undefined : Number(inputOf(e).value), e) }),
    ` ${t('devices.seconds')}`);
}

/** @param {DeviceRow} d */
function optionsCell(d) {
  const entry = ownEntry(d);
  if (d.kind === 'lock') {
    return el('div', {},
      el('label', { class: 'form-check-label d-block' },
        el('input', { type: 'checkbox', class: 'form-check-input me-1', 'data-option': 'doorSensor', checked: entry.doorSensor === true,
          onchange: (e) => changeDevice('lock', d.id, 'doorSensor', inputOf(e).checked, e) }), t('devices.doorSensor')),
      el('label', { class: 'form-check-label d-block', title: t('devices.doorSensorOnlyTitle') },
        el('input', { type: 'checkbox', class: 'form-check-input me-1', 'data-option': 'doorSensorOnly', checked: entry.doorSensorOnly === true,
          onchange: (e) => changeDevice('lock', d.id, 'doorSensorOnly', inputOf(e).checked, e) }), t('devices.doorSensorOnly')),
      guardInput(d.id, 'autoLockSeconds', t('devices.autoLock'), 3600, entry.autoLockSeconds, t('devices.autoLockTitle')),
      guardInput(d.id, 'leftOpenSeconds', t('devices.leftOpen'), 86400, entry.leftOpenSeconds, t('devices.leftOpenTitle')),
      guardInput(d.id, 'leftUnlockedSeconds', t('devices.leftUnlocked'), 86400, entry.leftUnlockedSeconds, t('devices.leftUnlockedTitle')));
  }
  return el('label', {},
    `${t('devices.motionFor')} `,
    el('input', { type: 'number', min: 1, max: 3600, class: 'form-control form-control-sm d-inline-block la-seconds', 'data-option': 'motionTimeoutSeconds',
      value: entry.motionTimeoutSeconds ?? '', placeholder: '30',
      onchange: (e) => changeDevice('doorbell', d.id, 'motionTimeoutSeconds', inputOf(e).value === '' ? undefined : Number(inputOf(e).value), e) }),
    ` ${t('devices.seconds')}`);
}

/** @param {DeviceRow} d */
function deviceRow(d) {
  const entry = ownEntry(d);
  const label = d.serviceName ?? d.id;
  const others = d.holders.filter((a) => a !== d.owner);
  return el('tr', { 'data-kind': d.kind, 'data-id': d.id, 'data-owner': d.owner, 'data-holders': d.holders.join(' ') },
    el('td', {}, el('div', { text: d.serviceName ? t(d.kind === 'lock' ? 'devices.lockNamed' : 'devices.doorbellNamed', { name: d.serviceName }) : t(d.kind === 'lock' ? 'devices.lock' : 'devices.doorbell') }), el('div', { class: 'text-muted', text: d.id }),
      others.length === 0 ? undefined : el('div', { class: 'la-shared', 'data-role': 'shared', text: t('devices.shared', { owner: accountName(d.owner), others: list(others.map(accountName)) }) })),
    el('td', {}, el('input', { type: 'text', class: 'form-control form-control-sm', 'data-option': 'name', value: entry.name ?? '', placeholder: label,
      'aria-label': t('devices.nameFor', { name: label }),
      onchange: (e) => changeDevice(d.kind, d.id, 'name', inputOf(e).value.trim(), e) })),
    el('td', {}, optionsCell(d)),
    el('td', {}, el('input', { type: 'checkbox', class: 'form-check-input', 'data-option': 'hidden', checked: entry.hidden === true, title: t('devices.hideTitle'),
      'aria-label': t('devices.hideFor', { name: label }),
      onchange: (e) => changeDevice(d.kind, d.id, 'hidden', inputOf(e).checked, e) })));
}

/**
 * The heading row of an account's devices (only with several accounts).
 * @param {string} id
 */
function groupRow(id) {
  return el('tr', { class: 'la-group', 'data-group': id }, el('th', { colspan: 4, scope: 'colgroup', text: t('devices.ofAccount', { name: accountName(id), id }) }));
}

export function renderDevices() {
  const devices = allDevices();
  const several = severalAccounts();
  const key = JSON.stringify([several, accountList(), devices.map((d) => [d.kind, d.id, d.serviceName, d.owner, d.holders])]);
  // Redraw only when the list changes, so typing in a name field is never interrupted.
  if (key === lastKey) return;
  lastKey = key;
  $('devices-empty').hidden = devices.length > 0;
  /** @type {HTMLTableRowElement[]} */
  const rows = [];
  for (const d of devices) {
    if (several && rows.at(-1)?.dataset.owner !== d.owner) rows.push(groupRow(d.owner));
    rows.push(deviceRow(d));
  }
  $('devices').querySelector('tbody')?.replaceChildren(...rows);
}

/** "Find my devices": every account is asked in turn; one that cannot answer is named with why. */
async function discoverAll() {
  resultTurn += 1;
  /** @type {string[]} */
  const lines = [];
  const several = severalAccounts();
  let answered = false;
  for (const a of accountList()) {
    try {
      /** @type {FoundDevices} */
      const answer = await hb().request('/discover', accountRequest(a.id));
      discovered.set(a.id, answer);
      answered = true;
      const found = t('devices.found', { locks: t('devices.foundLocks', { count: answer.locks.length }), doorbells: t('devices.foundDoorbells', { count: answer.doorbells.length }) });
      lines.push(several ? t('devices.foundIn', { name: a.name, found }) : found);
    } catch (error) {
      lines.push(several ? t('devices.notFoundIn', { name: a.name, reason: errorMessage(error) }) : errorMessage(error));
    }
  }
  say('devices-result', lines.join(' '), answered ? 'ok' : 'error');
  renderDevices();
}

export function wireDevices() {
  $('discover').addEventListener('click', (event) => busy(event.currentTarget, discoverAll));
}
