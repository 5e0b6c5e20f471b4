import { describe, expect, it } from 'vitest';

import { scheduleWords } from '../../src/model/keypad-schedule.js';

describe('a keypad code\'s schedule in words', () => {
  it.each([
    [{ accessType: 'recurring', accessTimes: 'STARTSEC=28800;ENDSEC=64800', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' }, 'Mon-Fri 08:00-18:00'],
    [{ accessTimes: 'STARTSEC=27000;ENDSEC=32400', accessRecurrence: 'FREQ=WEEKLY;BYDAY=SA,SU' }, 'Sat, Sun 07:30-09:00'],
    [{ accessTimes: 'STARTSEC=0;ENDSEC=86399', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU' }, 'every day 00:00-23:59'],
    [{ accessTimes: 'STARTSEC=3600;ENDSEC=7200', accessRecurrence: 'FREQ=DAILY' }, 'every day 01:00-02:00'],
    [{ accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,WE,FR' }, 'Mon, Wed, Fri'],
    [{ accessType: 'always' }, 'always'],
    [{}, undefined],
  ])('%o reads "%s"', (access, words) => {
    expect(scheduleWords(access)).toBe(words);
  });
});
