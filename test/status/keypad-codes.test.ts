import { describe, expect, it } from 'vitest';

import { normalise } from '../../src/callbacks/normalise.js';
import { classifyPayload } from '../../src/callbacks/callback-kinds.js';
import { eventLogEntrySchema, toEntry } from '../../src/status/event-entry.js';
import { keypadCodes } from '../../src/status/keypad-codes.js';
import { LOCK_ID, fixtures } from '../callbacks/fixtures.js';

const PIN = '482913';
const WEEKDAYS = { code: 'schedule.daysHours', params: { days: 'MO-FR', start: '08:00', end: '18:00' }, text: 'Mon-Fri 08:00-18:00' };

/** A PIN-managed callback as the service sends it, through the plugin's own parsing and event log. */
function entryFor(state: string, at: number, who: { UserID: string; FirstName: string }) {
  const body = { ...fixtures.pinManaged, Timestamp: at, PinUser: { ...fixtures.pinManaged.PinUser, ...who }, Pin: { state, action: 'commit', pin: PIN, accessType: 'recurring', accessTimes: 'STARTSEC=28800;ENDSEC=64800', accessRecurrence: 'FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR' } };
  const classified = classifyPayload(body);
  if (!classified.ok || !classified.payload) throw new Error('not a PIN callback');
  const [event] = normalise(classified.payload, 'lock');
  if (!event) throw new Error('no event');
  return toEntry({ deviceKind: 'lock', deviceId: LOCK_ID, deviceName: 'Front Door', event, at });
}

describe('keypad codes stay secret, and the settings page lists whose code, its state and schedule', () => {
  it('the digits of the code never reach the event or the event log entry', () => {
    const entry = entryFor('load', 1_000, { UserID: 'u-jamie', FirstName: 'Jamie' });
    expect(JSON.stringify(entry)).not.toContain(PIN);
    // The schedule's days and hours as codes the page words; the English words for the log.
    expect(entry).toMatchObject({ kind: 'pinManaged', pinState: 'load', schedule: WEEKDAYS, userName: expect.stringMatching(/^Jamie/) as unknown });
    expect(entry.text).toMatch(/for Jamie.* \(Mon-Fri 08:00-18:00\)/);
  });

  it('per lock and person the latest word wins: added then disabled reads disabled', () => {
    const entries = [
      entryFor('disable', 3_000, { UserID: 'u-jamie', FirstName: 'Jamie' }),
      entryFor('load', 2_000, { UserID: 'u-sam', FirstName: 'Sam' }),
      entryFor('load', 1_000, { UserID: 'u-jamie', FirstName: 'Jamie' }),
    ];
    const codes = keypadCodes(entries);
    expect(codes.map((c) => [c.who.split(' ')[0], c.state, c.schedule])).toEqual([
      ['Jamie', 'disabled', WEEKDAYS],
      ['Sam', 'added', WEEKDAYS],
    ]);
    expect(JSON.stringify(codes)).not.toContain(PIN);
  });

  it('an entry an earlier version wrote keeps its schedule in English words, and still shows', () => {
    const older = { ...entryFor('load', 1_000, { UserID: 'u-jamie', FirstName: 'Jamie' }), schedule: 'Mon-Fri 08:00-18:00' };
    const read = eventLogEntrySchema.parse(JSON.parse(JSON.stringify(older)));
    expect(keypadCodes([read]).map((c) => c.schedule)).toEqual(['Mon-Fri 08:00-18:00']);
  });
});
