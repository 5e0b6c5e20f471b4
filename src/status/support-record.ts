// What support needs to remember between visits of the settings page: the last test events and
// self-check results, in `support.json` under lock-access/. No secrets: lock ids, times, states and
// the sentences the page showed.
import { z } from 'zod/v3';

import type { Storage } from '../storage.js';

export const SUPPORT_FILE = 'support.json';
/** How many test events and self-checks are kept. */
export const SUPPORT_HISTORY = 20;

export const testEventRecordSchema = z.object({
  lockId: z.string(),
  startedAt: z.number(),
  state: z.enum(['passed', 'refused', 'otherPath', 'nothing', 'requestFailed']),
  message: z.string(),
  tookMs: z.number().optional(),
});

export const supportRecordSchema = z.object({
  testEvents: z.array(testEventRecordSchema).default([]),
});

export type TestEventRecord = z.infer<typeof testEventRecordSchema>;
export type SupportRecord = z.infer<typeof supportRecordSchema>;

export async function readSupportRecord(storage: Storage): Promise<SupportRecord> {
  return (await storage.read(SUPPORT_FILE, supportRecordSchema).catch(() => undefined)) ?? { testEvents: [] };
}

/** Adds a finished test event, newest first, keeping the last few. */
export async function recordTestEvent(storage: Storage, record: TestEventRecord): Promise<void> {
  const current = await readSupportRecord(storage);
  const testEvents = [record, ...current.testEvents.filter((e) => !(e.lockId === record.lockId && e.startedAt === record.startedAt))].slice(0, SUPPORT_HISTORY);
  await storage.write(SUPPORT_FILE, { ...current, testEvents });
}
