// A keypad code's schedule as a message: days as iCal day codes and hours as 24-hour times (the
// page words them through Intl in its language), with the English words for the log.
import { describe, expect, it } from 'vitest';

import { keypadSchedule } from '../../src/model/keypad-schedule.js';

describe('a keypad code\'s schedule: language-neutral params, English text', () => {
  it.each([
    [{ accessType: 'recurring', accessTimes: 'STARTSEC=28800;ENDSEC=64800', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' },
      'schedule.daysHours', { days: 'MO-FR', start: '08:00', end: '18:00' }, 'Mon-Fri 08:00-18:00'],
    [{ accessTimes: 'STARTSEC=27000;ENDSEC=32400', accessRecurrence: 'FREQ=WEEKLY;BYDAY=SA,SU' },
      'schedule.daysHours', { days: 'SA,SU', start: '07:30', end: '09:00' }, 'Sat, Sun 07:30-09:00'],
    [{ accessTimes: 'STARTSEC=0;ENDSEC=86399', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU' },
      'schedule.everyDayHours', { start: '00:00', end: '23:59' }, 'every day 00:00-23:59'],
    [{ accessTimes: 'STARTSEC=3600;ENDSEC=7200', accessRecurrence: 'FREQ=DAILY' }, 'schedule.everyDayHours', { start: '01:00', end: '02:00' }, 'every day 01:00-02:00'],
    [{ accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' }, 'schedule.days', { days: 'MO,WE,FR' }, 'Mon, Wed, Fri'],
    [{ accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,FR,SA' }, 'schedule.days', { days: 'MO-WE,FR,SA' }, 'Mon-Wed, Fri, Sat'],
    [{ accessRecurrence: 'FREQ=DAILY' }, 'schedule.everyDay', {}, 'every day'],
    [{ accessType: 'always' }, 'schedule.always', {}, 'always'],
  ])('%o is %s %o, "%s" in the log', (access, code, params, text) => {
    expect(keypadSchedule(access)).toEqual({ code, params, text });
  });

  it('no schedule named: none', () => {
    expect(keypadSchedule({})).toBeUndefined();
  });

  it('no param holds an English word', () => {
    const message = keypadSchedule({ accessTimes: 'STARTSEC=28800;ENDSEC=64800', accessRecurrence: 'BYDAY=MO,TU,WE,TH,FR,SU' });
    expect(message?.params).toEqual({ days: 'MO-FR,SU', start: '08:00', end: '18:00' });
    expect(JSON.stringify(message?.params)).not.toMatch(/Mon|Fri|Sun|every|always/);
  });
});
