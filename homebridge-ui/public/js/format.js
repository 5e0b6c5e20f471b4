// @ts-check
// Dates, times, durations, numbers and lists in the page's language, always through Intl with the
// page's locale: toLocaleString() without a locale would follow the browser, not the Homebridge UI.
import { intlLocale, t } from './i18n.js';

/**
 * A moment as the full local date and time (28.11.2026, 18:45:31 in German), or "never".
 * @param {number | string | undefined | null} at epoch ms or an ISO time
 */
export function when(at) {
  if (at === undefined || at === null) return t('common.never');
  const date = new Date(typeof at === 'string' ? Date.parse(at) : at);
  if (Number.isNaN(date.getTime())) return t('common.never');
  return new Intl.DateTimeFormat(intlLocale(), {
    year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: '2-digit', second: '2-digit',
  }).format(date);
}

/**
 * A time of today (18:45:31).
 * @param {Date} date
 */
export function timeOfDay(date) {
  return new Intl.DateTimeFormat(intlLocale(), { hour: 'numeric', minute: '2-digit', second: '2-digit' }).format(date);
}

/**
 * How far off, in words: "2 hours", "5 minutes", "30 seconds" (rounded to the largest unit that fits).
 * @param {number} ms
 */
export function duration(ms) {
  const seconds = Math.round(Math.abs(ms) / 1000);
  const minutes = Math.round(seconds / 60);
  /** @type {[number, 'hour' | 'minute' | 'second']} */
  const [value, unit] = minutes >= 120 ? [Math.round(minutes / 60), 'hour'] : minutes >= 1 ? [minutes, 'minute'] : [seconds, 'second'];
  return new Intl.NumberFormat(intlLocale(), { style: 'unit', unit, unitDisplay: 'long' }).format(value);
}

/**
 * A number in the page's locale.
 * @param {number} value
 */
export function number(value) {
  return new Intl.NumberFormat(intlLocale()).format(value);
}

/**
 * Items as a list ("A, B and C").
 * @param {readonly string[]} items
 * @param {'conjunction' | 'disjunction' | 'unit'} [type]
 */
export function list(items, type = 'conjunction') {
  return new Intl.ListFormat(intlLocale(), { style: 'long', type }).format(items);
}
