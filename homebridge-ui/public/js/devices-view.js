// @ts-check
// The Devices card: every lock and doorbell the config, the running plugin or "Find my devices"
// knows, each with its options (name in Home, door sensor, motion time, hide), written back to the
// config block's `locks` and `doorbells` entries.
import { account, block, changeConfig, entryFor } from './config-block.js';
import { $, busy, el, inputOf, say } from './dom.js';
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
  if (accepted && turn === resultTurn) say('devices-result', 'Changed: click "Save settings" (or Save below), then restart Homebridge.', 'info');
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
      value: typeof value === 'number' ? value : '', placeholder: 'off',
      onchange: (e) => changeDevice('lock', id, key, inputOf(e).value === '' || inputOf(e).value === '0' ? undefined : Number(inputOf(e).value), e) }),
    ' s');
}

/** @param {DeviceRow} d */
function optionsCell(d) {
  const entry = entryFor(block(), d.kind, d.id, false) ?? { id: d.id };
  if (d.kind === 'lock') {
    return el('div', {},
      el('label', { class: 'form-check-label d-block' },
        el('input', { type: 'checkbox', class: 'form-check-input me-1', 'data-option': 'doorSensor', checked: entry.doorSensor === true,
          onchange: (e) => changeDevice('lock', d.id, 'doorSensor', inputOf(e).checked, e) }), 'Door sensor'),
      el('label', { class: 'form-check-label d-block', title: 'For a lock already in HomeKit on its own: no lock here, only its door sensor, batteries and person triggers' },
        el('input', { type: 'checkbox', class: 'form-check-input me-1', 'data-option': 'doorSensorOnly', checked: entry.doorSensorOnly === true,
          onchange: (e) => changeDevice('lock', d.id, 'doorSensorOnly', inputOf(e).checked, e) }), 'Door sensor only'),
      guardInput(d.id, 'autoLockSeconds', 'Auto-lock after', 3600, entry.autoLockSeconds, 'Lock again once it is unlocked and the door closed this long (needs the door sensor)'),
      guardInput(d.id, 'leftOpenSeconds', 'Left open alert after', 86400, entry.leftOpenSeconds, 'A "Left Open" sensor trips when the door has been open this long'),
      guardInput(d.id, 'leftUnlockedSeconds', 'Left unlocked alert after', 86400, entry.leftUnlockedSeconds, 'A "Left Unlocked" sensor trips when the lock has been unlocked this long'));
  }
  return el('label', {},
    'Motion stays on for ',
    el('input', { type: 'number', min: 1, max: 3600, class: 'form-control form-control-sm d-inline-block la-seconds', 'data-option': 'motionTimeoutSeconds',
      value: entry.motionTimeoutSeconds ?? '', placeholder: '30',
      onchange: (e) => changeDevice('doorbell', d.id, 'motionTimeoutSeconds', inputOf(e).value === '' ? undefined : Number(inputOf(e).value), e) }),
    ' s');
}

/** @param {DeviceRow} d */
function deviceRow(d) {
  const entry = entryFor(block(), d.kind, d.id, false) ?? { id: d.id };
  const label = d.serviceName ?? d.id;
  return el('tr', { 'data-kind': d.kind, 'data-id': d.id },
    el('td', {}, el('div', { text: `${d.kind === 'lock' ? 'Lock' : 'Doorbell'}${d.serviceName ? `: ${d.serviceName}` : ''}` }), el('div', { class: 'text-muted', text: d.id })),
    el('td', {}, el('input', { type: 'text', class: 'form-control form-control-sm', 'data-option': 'name', value: entry.name ?? '', placeholder: label,
      'aria-label': `Name in Home for ${label}`,
      onchange: (e) => changeDevice(d.kind, d.id, 'name', inputOf(e).value.trim(), e) })),
    el('td', {}, optionsCell(d)),
    el('td', {}, el('input', { type: 'checkbox', class: 'form-check-input', 'data-option': 'hidden', checked: entry.hidden === true, title: 'Leave this device out of HomeKit',
      'aria-label': `Hide ${label} from HomeKit`,
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
    say('devices-result', `Found ${answer.locks.length} lock(s) and ${answer.doorbells.length} doorbell(s).`, 'ok');
    renderDevices();
  }));
}
