// @ts-check
// The Keypad codes card: each lock's codes as the PIN-managed callbacks told them (whose, what last
// happened, the schedule in words), read-only. The settings server never sends a code's digits.
import { $, el } from './dom.js';
import { when } from './format.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';

/** @typedef {import('../../types/page.js').KeypadCode} KeypadCode */

/** What last happened to a code, worded by the catalog's keypad.states.<state>; the service's own word for another. */
const STATES = new Set(['added', 'enabled', 'disabled', 'deleted', 'changed']);

/** @param {KeypadCode[]} codes */
export function renderKeypadCodes(codes) {
  const body = $('keypad-codes').querySelector('tbody');
  if (!body) return;
  body.replaceChildren(...codes.map((code) => el('tr', { 'data-lock': code.lockId, 'data-state': code.state },
    el('td', { text: code.lockName }),
    el('td', { text: code.who }),
    el('td', { text: STATES.has(code.state) ? t(`keypad.states.${code.state}`) : code.state }),
    el('td', { text: code.schedule === undefined ? t('keypad.noSchedule') : showMessage(code.schedule) }),
    el('td', { text: when(code.at) }))));
  $('keypad-empty').hidden = codes.length > 0;
}
