// @ts-check
// The Devices card: every lock and doorbell the config, the running plugin or "Find my devices"
// knows, each with its options (name in Home, door sensor, motion time, hide), written back to the
// config block's `locks` and `doorbells` entries.
import { account, block, changeConfig, entryFor } from './config-block.js';
import { $, busy, el, inputOf, say } from './dom.js';
import { t } from './i18n.js';
import { call } from './requests.js';

/** @typedef {import('../../types/page.js').DeviceKind} DeviceKind */
/** @typedef {import('../../types/page.js').DeviceStatus} DeviceStatus */
/** @typedef {import('../../types/page.js').FoundDevices} FoundDevices */
/** @typedef {{ kind: DeviceKind; id: string; serviceName: string | undefined; sources: Set<string> }} DeviceRow */

/** Devices the service listed after "Find my devices". @type {FoundDevices} */
let discovered = { locks: [], doorbells: [] };
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
  const accepted = await changeConfig((draft) => {
    const entry = entryFor(draft, kind, id, true);
    if (!entry) return;
    if (value === undefined || value === '' || value === false) Reflect.deleteProperty(entry, key);
    else entry[key] = value;
  }, 'devices-result', inputOf(event));
  if (accepted && turn === resultTurn) say('devices-result', t('devices.changed'), 'info');
}

/** @returns {DeviceRow[]} */
function allDevices() {
  /** @type {Map<string, DeviceRow>} */
  const byKey = new Map();
  /** @type {(kind: DeviceKind, id: string, name: string | undefined, source: string) => void} */
  const add = (kind, id, name, source) => {
    const key = `${kind}:${id}`;
    const known = byKey.get(key);
    if (known) {
      known.sources.add(source);
      known.serviceName ??= name;
    } else byKey.set(key, { kind, id, serviceName: name, sources: new Set([source]) });
  };
  const current = block();
  for (const e of current.locks ?? []) add('lock', e.id, undefined, 'config');
  for (const e of current.doorbells ?? []) add('doorbell', e.id, undefined, 'config');
  for (const d of pluginDevices) add(d.kind, d.id, d.source === 'config' ? undefined : d.name, 'plugin');
  for (const d of discovered.locks) add('lock', d.id, d.name, 'service');
  for (const d of discovered.doorbells) add('doorbell', d.id, d.name, 'service');
  return [...byKey.values()].sort((a, b) => (a.kind === b.kind ? a.id.localeCompare(b.id) : a.kind === 'lock' ? -1 : 1));
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
  const entry = entryFor(block(), d.kind, d.id, false) ?? { id: d.id };
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
  const entry = entryFor(block(), d.kind, d.id, false) ?? { id: d.id };
  const label = d.serviceName ?? d.id;
  return el('tr', { 'data-kind': d.kind, 'data-id': d.id },
    el('td', {}, el('div', { text: d.serviceName ? t(d.kind === 'lock' ? 'devices.lockNamed' : 'devices.doorbellNamed', { name: d.serviceName }) : t(d.kind === 'lock' ? 'devices.lock' : 'devices.doorbell') }), el('div', { class: 'text-muted', text: d.id })),
    el('td', {}, el('input', { type: 'text', class: 'form-control form-control-sm', 'data-option': 'name', value: entry.name ?? '', placeholder: label,
      'aria-label': t('devices.nameFor', { name: label }),
      onchange: (e) => changeDevice(d.kind, d.id, 'name', inputOf(e).value.trim(), e) })),
    el('td', {}, optionsCell(d)),
    el('td', {}, el('input', { type: 'checkbox', class: 'form-check-input', 'data-option': 'hidden', checked: entry.hidden === true, title: t('devices.hideTitle'),
      'aria-label': t('devices.hideFor', { name: label }),
      onchange: (e) => changeDevice(d.kind, d.id, 'hidden', inputOf(e).checked, e) })));
}

export function renderDevices() {
  const devices = allDevices();
  const key = JSON.stringify(devices.map((d) => [d.kind, d.id, d.serviceName]));
  // Redraw only when the list changes, so typing in a name field is never interrupted.
  if (key === lastKey) return;
  lastKey = key;
  $('devices-empty').hidden = devices.length > 0;
  $('devices').querySelector('tbody')?.replaceChildren(...devices.map(deviceRow));
}

export function wireDevices() {
  $('discover').addEventListener('click', (event) => busy(event.currentTarget, async () => {
    resultTurn += 1;
    /** @type {FoundDevices | undefined} */
    const answer = await call('/discover', { account: account() }, 'devices-result');
    if (!answer) return;
    discovered = answer;
    say('devices-result', t('devices.found', { locks: t('devices.foundLocks', { count: answer.locks.length }), doorbells: t('devices.foundDoorbells', { count: answer.doorbells.length }) }), 'ok');
    renderDevices();
  }));
}
