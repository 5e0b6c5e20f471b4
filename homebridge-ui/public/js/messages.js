// @ts-check
// What the settings server and the plugin's status send for the page to show: a message code with
// params, worded here in the page's language ({code, params, text}); `text` (English) only for a
// code this page does not know. Older status files hold plain sentences: those show as they are.
import { t } from './i18n.js';
import { scheduleParams } from './schedule-words.js';

/** @typedef {import('../../types/page.js').UiMessage} UiMessage */

/**
 * Whether a value is a message with a code.
 * @param {unknown} value
 * @returns {value is { code: string; params?: Record<string, unknown>; text?: string }}
 */
function isCoded(value) {
  return typeof value === 'object' && value !== null && typeof (/** @type {{ code?: unknown }} */ (value)).code === 'string';
}

/**
 * A message's words in the page's language.
 * @param {UiMessage | null | undefined} message
 * @returns {string}
 */
export function showMessage(message) {
  if (message === undefined || message === null) return '';
  if (typeof message === 'string') return message;
  return isCoded(message) ? worded(message) : String(message);
}

/**
 * @param {{ code: string; params?: Record<string, unknown>; text?: string }} message
 * @returns {string}
 */
function worded(message) {
  /** @type {import('./i18n.js').Params} */
  const params = {};
  for (const [name, value] of Object.entries(message.params ?? {})) {
    if (typeof value === 'number' || typeof value === 'string') params[name] = value;
    else if (isCoded(value)) params[name] = worded(value);
    else if (value !== undefined && value !== null) params[name] = String(value);
  }
  // A keypad code's schedule names days and hours by code: the page words them through Intl.
  const words = t(message.code, message.code.startsWith('schedule.') ? scheduleParams(params) : params);
  return words === message.code && typeof message.text === 'string' ? message.text : words;
}

/**
 * The words of a failed request: a refusal of the settings server carries its message (coded in
 * its `error` data when the server gives a code), anything else its error text.
 * @param {unknown} error
 */
export function errorMessage(error) {
  if (typeof error !== 'object' || error === null) return String(error);
  const data = /** @type {{ error?: unknown; message?: unknown }} */ (error);
  const text = typeof data.message === 'string' ? data.message : undefined;
  if (isCoded(data.error)) return worded({ ...data.error, text: data.error.text ?? text });
  if (isCoded(data)) return worded(data);
  return text ?? String(error);
}

/**
 * A device in the page's words ("Lock Front Door"), by its name or, without one, its id.
 * @param {string} kind 'lock' or 'doorbell'
 * @param {string} name
 */
export function deviceWords(kind, name) {
  return t(kind === 'lock' ? 'common.lockNamed' : 'common.doorbellNamed', { name });
}

/**
 * A webhook registration in the page's words: the account's own (user) one, or its device's.
 * @param {string} kind 'lock', 'doorbell' or 'user'
 * @param {string} name the device's name, or its id
 */
export function registrationWords(kind, name) {
  return kind === 'user' ? t('status.registrations.user') : deviceWords(kind, name);
}
