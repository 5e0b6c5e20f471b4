// @ts-check
// The Keypad codes card: each lock's codes as the PIN-managed callbacks told them (whose, what last
// happened, the schedule in words), read-only. The settings server never sends a code's digits.
import { $, el, when } from './dom.js';

/** @typedef {import('../../types/page.js').KeypadCode} KeypadCode */

/** @param {KeypadCode[]} codes */
export function renderKeypadCodes(codes) {
  const body = $('keypad-codes').querySelector('tbody');
  if (!body) return;
  body.replaceChildren(...codes.map((code) => el('tr', { 'data-lock': code.lockId, 'data-state': code.state },
    el('td', { text: code.lockName }),
    el('td', { text: code.who }),
    el('td', { text: code.state }),
    el('td', { text: code.schedule ?? 'not given' }),
    el('td', { text: when(code.at) }))));
  $('keypad-empty').hidden = codes.length > 0;
}
