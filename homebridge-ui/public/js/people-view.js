// @ts-check
// The People card: everyone the event log names, each with an "Automation trigger" switch written
// to the config block's `people`. The event log's person filter offers the same people.
import { block, changeConfig } from './config-block.js';
import { $, el, inputOf, say } from './dom.js';
import { when } from './format.js';
import { t } from './i18n.js';

/** @typedef {import('../../types/page.js').PersonSeen} PersonSeen */
/** @typedef {import('../../types/page.js').ConfigBlock} ConfigBlock */
/** @typedef {{ userId: string; name?: string; lastSeen: number | undefined }} PersonRow */

/** People the event log names (from /people), newest first. @type {PersonSeen[]} */
let seenPeople = [];
let lastKey = '';

/** @param {PersonSeen[]} people */
export function setSeenPeople(people) {
  seenPeople = people;
}

/** @param {ConfigBlock} target */
function configuredPeople(target) {
  return Array.isArray(target.people) ? target.people : [];
}

/** @returns {PersonRow[]} everyone seen in the event log, then configured people the log no longer names (so they can be switched off) */
function allPeople() {
  /** @type {PersonRow[]} */
  const rows = seenPeople.map((p) => ({ userId: p.userId, name: p.name, lastSeen: p.lastSeen }));
  for (const p of configuredPeople(block())) {
    if (!rows.some((r) => r.userId === p.userId)) rows.push({ userId: p.userId, name: p.name, lastSeen: undefined });
  }
  return rows;
}

/**
 * @param {PersonRow} person
 * @param {boolean} on
 * @param {Element} control
 */
async function setTrigger(person, on, control) {
  const accepted = await changeConfig((draft) => {
    const people = configuredPeople(draft);
    const index = people.findIndex((p) => p.userId === person.userId);
    if (on && index < 0) people.push(person.name ? { userId: person.userId, name: person.name } : { userId: person.userId });
    if (!on && index >= 0) people.splice(index, 1);
    if (people.length === 0) Reflect.deleteProperty(draft, 'people');
    else draft.people = people;
  }, 'people-result', control);
  if (accepted) say('people-result', t(on ? 'people.triggerOn' : 'people.triggerOff', { name: person.name || person.userId }), 'info');
}

export function renderPeople() {
  const people = allPeople();
  const configured = new Set(configuredPeople(block()).map((p) => p.userId));
  const key = JSON.stringify([people, [...configured]]);
  if (key === lastKey) return;
  lastKey = key;
  $('people-empty').hidden = people.length > 0;
  $('people').querySelector('tbody')?.replaceChildren(...people.map((p) => {
    const label = p.name || p.userId;
    return el('tr', { 'data-user': p.userId },
      el('td', {}, el('div', { text: label }), el('div', { class: 'text-muted', text: p.userId })),
      el('td', { class: 'text-nowrap', text: p.lastSeen === undefined ? t('people.notInLog') : when(p.lastSeen) }),
      el('td', {}, el('div', { class: 'form-check form-switch mb-0' },
        el('input', { type: 'checkbox', role: 'switch', class: 'form-check-input', id: `trigger-${p.userId}`, 'data-trigger': p.userId,
          checked: configured.has(p.userId), 'aria-label': t('people.triggerFor', { name: label }),
          onchange: (e) => setTrigger(p, inputOf(e).checked, inputOf(e)) }))));
  }));
  const select = /** @type {HTMLSelectElement} */ ($('events-person'));
  const chosen = select.value;
  select.replaceChildren(el('option', { value: '', text: t('events.everyone') }), ...people.map((p) => el('option', { value: p.userId, text: p.name || p.userId })));
  select.value = people.some((p) => p.userId === chosen) ? chosen : '';
}
