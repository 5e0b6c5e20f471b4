// A keypad code's schedule from the PIN-managed callback's access fields, as a message: the days as
// iCal day codes (`MO-FR`, `SA,SU`) and the hours as 24-hour times (`08:00`), which the settings
// page words in its language (weekday names and times through Intl); the English `text` ("Mon-Fri
// 08:00-18:00", "every day 07:30-09:00", "always") is the log's. Never anything of the code itself.
import { fillTemplate, messageCatalog, uiMessage, type UiMessage } from '../util/ui-message.js';

export const SCHEDULE_MESSAGES = {
  'schedule.always': 'always',
  'schedule.everyDay': 'every day',
  'schedule.everyDayHours': 'every day {start}-{end}',
  'schedule.days': '{days}',
  'schedule.daysHours': '{days} {start}-{end}',
} as const;

const scheduleMessage = messageCatalog(SCHEDULE_MESSAGES);

/** Monday first, as the callback names the days (iCal BYDAY). */
export const DAY_ORDER = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
const DAY_WORDS: Record<(typeof DAY_ORDER)[number], string> = { MO: 'Mon', TU: 'Tue', WE: 'Wed', TH: 'Thu', FR: 'Fri', SA: 'Sat', SU: 'Sun' };

/** `KEY=value;KEY=value` as a map (keys upper-case). */
function pairs(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (text ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim().toUpperCase(), part.slice(eq + 1).trim());
  }
  return out;
}

function clock(secondsOfDay: number): string {
  const minutes = Math.floor(secondsOfDay / 60) % (24 * 60);
  return `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

/**
 * The days as runs, each a day code or a range of three or more (`MO-FR`), joined by commas:
 * MO,TU,WE,TH,FR -> "MO-FR"; MO,WE -> "MO,WE". 'every' for all seven, undefined for none.
 */
function dayRuns(byDay: string): string | undefined {
  const wanted = new Set(byDay.split(',').map((d) => d.trim().toUpperCase()));
  const indexes = DAY_ORDER.map((day, i) => (wanted.has(day) ? i : -1)).filter((i) => i >= 0);
  if (indexes.length === 0) return undefined;
  if (indexes.length === 7) return 'every';
  const runs: number[][] = [];
  for (const i of indexes) {
    const last = runs.at(-1);
    if (last && last.at(-1) === i - 1) last.push(i);
    else runs.push([i]);
  }
  const code = (i: number | undefined) => DAY_ORDER[i ?? 0] ?? 'MO';
  return runs.map((run) => (run.length >= 3 ? `${code(run[0])}-${code(run.at(-1))}` : run.map(code).join(','))).join(',');
}

/** "MO-FR,SU" in English words: "Mon-Fri, Sun". */
function englishDays(runs: string): string {
  return runs.split(',').map((run) => run.split('-').map((day) => DAY_WORDS[day as keyof typeof DAY_WORDS]).join('-')).join(', ');
}

/** The schedule as a message, or undefined when the callback names none. */
export function keypadSchedule(access: { accessType?: string | undefined; accessTimes?: string | undefined; accessRecurrence?: string | undefined }): UiMessage | undefined {
  const times = pairs(access.accessTimes);
  const recurrence = pairs(access.accessRecurrence);
  const start = Number(times.get('STARTSEC'));
  const end = Number(times.get('ENDSEC'));
  const hours = Number.isFinite(start) && Number.isFinite(end) && times.has('STARTSEC') && times.has('ENDSEC') ? { start: clock(start), end: clock(end) } : undefined;
  const byDay = recurrence.get('BYDAY');
  const runs = byDay ? dayRuns(byDay) : recurrence.get('FREQ')?.toUpperCase() === 'DAILY' ? 'every' : undefined;
  if (runs === undefined && hours === undefined) return access.accessType?.toLowerCase() === 'always' ? scheduleMessage('schedule.always') : undefined;
  // Hours without days are every day's.
  const days = runs === 'every' ? undefined : runs;
  if (days === undefined) return hours === undefined ? scheduleMessage('schedule.everyDay') : scheduleMessage('schedule.everyDayHours', hours);
  const code = hours === undefined ? 'schedule.days' : 'schedule.daysHours';
  const params = { days, ...hours };
  return uiMessage(code, params, fillTemplate(SCHEDULE_MESSAGES[code], { ...params, days: englishDays(days) }));
}
