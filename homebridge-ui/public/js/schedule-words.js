// @ts-check
// A keypad code's schedule in the page's language. The plugin sends its days as iCal day codes in
// runs ("MO-FR,SU") and its hours as 24-hour times ("08:00"); the weekday names, the times and the
// list come from Intl with the page's locale, the range and the sentence from the catalog.
import { list } from './format.js';
import { intlLocale, t } from './i18n.js';

/** @typedef {import('./i18n.js').Params} Params */

const DAYS = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];

/**
 * A weekday's short name ("Mo" in German): 1 January 2024 was a Monday.
 * @param {string} code
 */
function dayName(code) {
  const index = DAYS.indexOf(code);
  if (index < 0) return code;
  return new Intl.DateTimeFormat(intlLocale(), { weekday: 'short', timeZone: 'UTC' }).format(new Date(Date.UTC(2024, 0, 1 + index)));
}

/**
 * "MO-FR,SU" as "Mon-Fri and Sun" in the page's language.
 * @param {string} runs
 */
function days(runs) {
  return list(runs.split(',').map((run) => {
    const [from = '', to] = run.split('-');
    return to === undefined ? dayName(from) : t('schedule.dayRange', { from: dayName(from), to: dayName(to) });
  }));
}

/**
 * "18:00" as the locale shows a time of day (6:00 PM in English).
 * @param {string} time
 */
function clockTime(time) {
  const match = /^(\d{1,2}):(\d{2})$/.exec(time);
  if (!match) return time;
  return new Intl.DateTimeFormat(intlLocale(), { hour: 'numeric', minute: '2-digit', timeZone: 'UTC' }).format(new Date(Date.UTC(2024, 0, 1, Number(match[1]), Number(match[2]))));
}

/**
 * A schedule message's params with its days and hours worded for the page.
 * @param {Params} params
 * @returns {Params}
 */
export function scheduleParams(params) {
  const worded = { ...params };
  if (typeof params.days === 'string') worded.days = days(params.days);
  if (typeof params.start === 'string') worded.start = clockTime(params.start);
  if (typeof params.end === 'string') worded.end = clockTime(params.end);
  return worded;
}
