// One entry of the event log: the schema of what `events.json` keeps of an event, and the pure
// step from an event routed to a device to that entry (its line as a catalog code, its params and
// the English sentence, the recording, the still image, the person). No secrets: words, ids,
// names, times, recording ids and still-image URLs.
import { z } from 'zod/v3';

import type { DeviceEvent } from '../model/events.js';
import { eventLine, eventPerson, type OwnAction } from '../model/event-words.js';
import { MESSAGE_CODE, uiMessageSchema } from '../util/ui-message.js';

export const eventLogEntrySchema = z.object({
  deviceKind: z.enum(['lock', 'doorbell', 'account']),
  deviceId: z.string(),
  deviceName: z.string(),
  /** The DeviceEvent kind, e.g. "lockState" or "videoAvailable". */
  kind: z.string(),
  /** Epoch milliseconds. */
  at: z.number(),
  /**
   * The line as the page words it: a catalog code and its params (names, numbers, a schedule;
   * another line for `{line}`). Entries an earlier version wrote have only `text`, shown as it is.
   */
  how: z.string().regex(MESSAGE_CODE).optional(),
  params: z.record(z.string(), z.union([z.number(), z.string(), uiMessageSchema()])).optional(),
  /** The line in English (logs, diagnostics, and the page for an entry without `how`). */
  text: z.string(),
  /** Recording id of a doorbell press or recording, for "play recording". */
  dvrId: z.string().optional(),
  /** The still image of a motion event. */
  imageUrl: z.string().optional(),
  /** The person the event is about (the settings UI lists people and filters by them). */
  userId: z.string().optional(),
  userName: z.string().optional(),
  /**
   * A keypad code's change (load, enable, disable, delete, update) and its schedule as a message
   * (days and hours the page words); an earlier version's entry has it in English words. Never the code.
   */
  pinState: z.string().optional(),
  schedule: z.union([z.string(), uiMessageSchema()]).optional(),
});

export type EventLogEntry = z.infer<typeof eventLogEntrySchema>;

export interface EventLogRecord {
  deviceKind: 'lock' | 'doorbell' | 'account';
  deviceId: string;
  deviceName: string;
  event: DeviceEvent;
  /** When it happened (epoch ms): the event's own time, or when it arrived. */
  at: number;
  /** The plugin's own doing (its auto-lock): worded so, and about no person. */
  own?: OwnAction;
}

/** Turns a record into the stored entry (pure). */
export function toEntry(record: EventLogRecord): EventLogEntry {
  const { event } = record;
  const line = eventLine(event, record.deviceName, record.own);
  const entry: EventLogEntry = {
    deviceKind: record.deviceKind,
    deviceId: record.deviceId,
    deviceName: record.deviceName,
    kind: event.kind,
    at: record.at,
    how: line.code,
    params: line.params,
    text: line.text,
  };
  if ((event.kind === 'doorbellPress' || event.kind === 'videoAvailable') && event.dvrId) entry.dvrId = event.dvrId;
  if (event.kind === 'motion' && event.imageUrl) entry.imageUrl = event.imageUrl;
  if (event.kind === 'pinManaged' && !event.masterPin) {
    entry.pinState = event.state;
    if (event.schedule !== undefined) entry.schedule = event.schedule;
  }
  const person = eventPerson(event, record.own);
  if (person) entry.userId = person.userId;
  if (person?.name !== undefined) entry.userName = person.name;
  return entry;
}
