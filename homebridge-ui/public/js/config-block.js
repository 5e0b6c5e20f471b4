// @ts-check
// The plugin's config block, secrets included: held in memory only, never written into the page.
// Every change goes through changeConfig, which lets the settings server check it with the
// plugin's own config rules first: a value the plugin would refuse is never handed to the
// Homebridge UI, so "Save" cannot write it.
import { problemSolved, showProblems } from './field-problems.js';
import { call, hb } from './requests.js';

/** @typedef {import('../../types/page.js').ConfigBlock} ConfigBlock */
/** @typedef {import('../../types/page.js').DeviceEntry} DeviceEntry */
/** @typedef {import('../../types/page.js').DeviceKind} DeviceKind */
/** @typedef {import('../../types/page.js').FieldProblem} FieldProblem */

export const PLATFORM = 'LockAccess';
const SECRETS = /** @type {const} */ (['apiKey', 'clientSecret']);

/** @type {ConfigBlock} */
let current = { platform: PLATFORM, name: 'Lock Access' };
/** Changes run one after another: each starts from the block the previous one left. */
let queue = Promise.resolve(true);

/** The block as last accepted (read-only for views: change it through changeConfig). */
export function block() {
  return current;
}

/** Loads the plugin's block from the Homebridge UI (the first LockAccess platform block). */
export async function loadBlock() {
  const blocks = /** @type {ConfigBlock[]} */ (await hb().getPluginConfig());
  current = blocks.find((b) => b.platform === PLATFORM) ?? blocks[0] ?? current;
  current.platform = PLATFORM;
}

/**
 * The value at a dotted path ("webhook.publicUrl").
 * @param {unknown} obj
 * @param {string} path
 * @returns {unknown}
 */
export function getPath(obj, path) {
  return path.split('.').reduce((/** @type {unknown} */ value, key) => (value && typeof value === 'object' ? /** @type {Record<string, unknown>} */ (value)[key] : undefined), obj);
}

/**
 * Sets the value at a dotted path, creating objects on the way; undefined or '' removes the key.
 * @param {Record<string, unknown>} obj
 * @param {string} path
 * @param {unknown} value
 */
export function setPath(obj, path, value) {
  const keys = path.split('.');
  let target = obj;
  for (const key of keys.slice(0, -1)) {
    const next = target[key];
    if (!next || typeof next !== 'object') target[key] = {};
    target = /** @type {Record<string, unknown>} */ (target[key]);
  }
  const last = keys[keys.length - 1] ?? '';
  if (value === undefined || value === '') Reflect.deleteProperty(target, last);
  else target[last] = value;
}

/**
 * The block's entry for a device, created when asked.
 * @param {ConfigBlock} target
 * @param {DeviceKind} kind
 * @param {string} id
 * @param {boolean} create
 * @returns {DeviceEntry | undefined}
 */
export function entryFor(target, kind, id, create) {
  const listKey = kind === 'lock' ? 'locks' : 'doorbells';
  const list = Array.isArray(target[listKey]) ? /** @type {DeviceEntry[]} */ (target[listKey]) : [];
  let entry = list.find((e) => e.id === id);
  if (!entry && create) {
    entry = { id };
    list.push(entry);
    target[listKey] = list;
  }
  return entry;
}

/** What the server needs to reach the service: the current (maybe unsaved) account fields. */
export function account() {
  /** @type {Record<string, unknown>} */
  const fields = { clientId: current.clientId, baseUrl: current.baseUrl, authUrl: current.authUrl, publicUrl: getPath(current, 'webhook.publicUrl') };
  for (const key of SECRETS) fields[key] = current[key];
  for (const key of Object.keys(fields)) if (typeof fields[key] !== 'string' || fields[key] === '') Reflect.deleteProperty(fields, key);
  return fields;
}

/**
 * Applies `change` to a copy of the block, asks the settings server whether the plugin accepts the
 * result and only then hands it to the Homebridge UI. When refused, nothing changes: the problems
 * are shown next to their fields (and in `resultBox`).
 * @param {(draft: ConfigBlock) => void} change
 * @param {string} resultBox id of the result box of the card that made the change
 * @param {Element} [control] the control the change was made with (its refusal mark goes when accepted)
 * @returns {Promise<boolean>} whether the change was accepted
 */
export function changeConfig(change, resultBox, control) {
  const run = () => apply(change, resultBox, control);
  queue = queue.then(run, run);
  return queue;
}

/**
 * @param {(draft: ConfigBlock) => void} change
 * @param {string} resultBox
 * @param {Element | undefined} control
 */
async function apply(change, resultBox, control) {
  const draft = /** @type {ConfigBlock} */ (structuredClone(current));
  change(draft);
  const answer = /** @type {{ problems: FieldProblem[] } | undefined} */ (await call('/config/check', { config: draft }, resultBox));
  if (!answer) return false;
  if (answer.problems.length > 0) {
    showProblems(answer.problems, draft, resultBox);
    return false;
  }
  problemSolved(control);
  current = draft;
  await hb().updatePluginConfig([current]);
  return true;
}

/** Hands the current block to the Homebridge UI again, checked like any change. */
export function pushConfig(/** @type {string} */ resultBox) {
  return changeConfig(() => undefined, resultBox);
}
