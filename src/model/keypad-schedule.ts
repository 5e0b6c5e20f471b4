// A keypad code's schedule in words, from the PIN-managed callback's access fields: "Mon-Fri
// 08:00-18:00", "every day 07:30-09:00", "always". Never anything of the code itself.

const DAY_ORDER = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'] as const;
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

/** Consecutive days as ranges: MO,TU,WE,TH,FR -> "Mon-Fri"; MO,WE -> "Mon, Wed". */
function days(byDay: string): string {
  const wanted = new Set(byDay.split(',').map((d) => d.trim().toUpperCase()));
  const indexes = DAY_ORDER.map((day, i) => (wanted.has(day) ? i : -1)).filter((i) => i >= 0);
  if (indexes.length === 7) return 'every day';
  const runs: number[][] = [];
  for (const i of indexes) {
    const last = runs.at(-1);
    if (last && last.at(-1) === i - 1) last.push(i);
    else runs.push([i]);
  }
  const name = (i: number | undefined) => (i === undefined ? '' : DAY_WORDS[DAY_ORDER[i] ?? 'MO']);
  return runs.map((run) => (run.length >= 3 ? `${name(run[0])}-${name(run.at(-1))}` : run.map(name).join(', '))).join(', ');
}

/** The schedule in words, or undefined when the callback names none. */
export function scheduleWords(access: { accessType?: string | undefined; accessTimes?: string | undefined; accessRecurrence?: string | undefined }): string | undefined {
  const times = pairs(access.accessTimes);
  const recurrence = pairs(access.accessRecurrence);
  const start = Number(times.get('STARTSEC'));
  const end = Number(times.get('ENDSEC'));
  const hours = Number.isFinite(start) && Number.isFinite(end) && times.has('STARTSEC') && times.has('ENDSEC') ? `${clock(start)}-${clock(end)}` : undefined;
  const byDay = recurrence.get('BYDAY');
  const when = byDay ? days(byDay) : recurrence.get('FREQ')?.toUpperCase() === 'DAILY' ? 'every day' : undefined;
  if (when === undefined && hours === undefined) return access.accessType?.toLowerCase() === 'always' ? 'always' : undefined;
  return [when ?? 'every day', hours].filter(Boolean).join(' ');
}
