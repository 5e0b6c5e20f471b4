// A door's open/close history: each change of position with its time, how often it was opened and
// when last. Pure state of the lock, kept by the device registry; Eve's history service renders it
// (src/homekit/eve-door-history.ts has the byte encodings).
import { z } from 'zod/v3';

import { transient } from '../util/transient.js';

/** Entries kept per door: each is one open or close, so about 500 of each. */
export const DOOR_HISTORY_SIZE = 1024;

/** The saved history's schema, made when a saved history is read (at start) and then left to the collector. */
const doorHistorySchema = transient(() =>
  z.object({
    version: z.literal(1),
    /** Unix seconds when this history started; entry times count from here. */
    initialTime: z.number().int().nonnegative(),
    memorySize: z.number().int().min(2),
    /** The oldest entry number Eve may still ask for (sent as the reference record). */
    firstEntry: z.number().int().min(1),
    lastEntry: z.number().int().min(1),
    /** [entry number, unix seconds, 1 open / 0 closed], oldest first, numbers after firstEntry. */
    entries: z.array(z.tuple([z.number().int(), z.number().int(), z.union([z.literal(0), z.literal(1)])])),
    timesOpened: z.number().int().nonnegative(),
    /** Unix seconds of the last opening. */
    lastOpened: z.number().int().optional(),
    /** What Eve last wrote to ResetTotal (seconds since 2001), echoed on reads. */
    resetTotal: z.number().int().nonnegative().optional(),
  }),
);

export type DoorHistoryState = z.infer<ReturnType<typeof doorHistorySchema>>;

export function newDoorHistory(nowSeconds: number, memorySize = DOOR_HISTORY_SIZE): DoorHistoryState {
  return { version: 1, initialTime: nowSeconds, memorySize, firstEntry: 1, lastEntry: 1, entries: [], timesOpened: 0 };
}

/** A saved history, or undefined when it does not validate or starts in the future (the clock was wrong). */
export function parseDoorHistory(raw: unknown, nowSeconds: number): DoorHistoryState | undefined {
  const parsed = doorHistorySchema().safeParse(raw);
  if (!parsed.success || parsed.data.initialTime > nowSeconds + 24 * 60 * 60) return undefined;
  return parsed.data;
}

export interface DoorHistoryChange {
  state: DoorHistoryState;
  /** false when the door kept its position (open after ajar, a second closed): nothing is recorded. */
  recorded: boolean;
}

/** The door's position at `seconds` (unix). Records only changes; counts closed -> open as an opening. */
export function recordDoor(state: DoorHistoryState, seconds: number, open: boolean): DoorHistoryChange {
  const last = state.entries.at(-1);
  const status = open ? 1 : 0;
  if (last?.[2] === status) return { state, recorded: false };
  // Entries stay in time order and never before the start, whatever the lock's clock says.
  const time = Math.max(Math.round(seconds), last?.[1] ?? state.initialTime, state.initialTime);
  const lastEntry = state.lastEntry + 1;
  // The window of answerable numbers (firstEntry..lastEntry) never exceeds the memory size.
  const firstEntry = Math.max(state.firstEntry, lastEntry - state.memorySize + 1);
  const entries = [...state.entries, [lastEntry, time, status] as [number, number, 0 | 1]].filter(([n]) => n > firstEntry);
  const next: DoorHistoryState = { ...state, firstEntry, lastEntry, entries };
  if (open) {
    next.timesOpened = state.timesOpened + 1;
    next.lastOpened = time;
  }
  return { state: next, recorded: true };
}

/** Eve's reset button: the opening count starts again (the history stays). */
export function resetDoorCount(state: DoorHistoryState, resetTotal: number): DoorHistoryState {
  return { ...state, timesOpened: 0, resetTotal };
}

/** LastActivation: seconds from the history's start to the last opening (0 before any). */
export function lastActivation(state: DoorHistoryState): number {
  return state.lastOpened === undefined ? 0 : Math.max(0, state.lastOpened - state.initialTime);
}
