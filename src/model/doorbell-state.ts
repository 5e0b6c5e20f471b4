// Pure state of one doorbell and the decision whether an event rings phones. Plain JSON, so the
// doorbell device keeps it across restarts through its store (its part of devices.json).
import { z } from 'zod/v3';

import { MAX_RING_AGE_MS } from '../settings.js';
import { deviceTime, order, repairMarks, type DeliveryContext } from './event-time.js';
import { describeEvent } from './event-words.js';
import type { DoorbellEvent } from './events.js';
import { recentEventSchema, RECENT_EVENTS, type RecentEvent } from './lock-state.js';

export const doorbellStateSchema = z.object({
  version: z.literal(1),
  lastPress: z.object({ at: z.number().optional(), receivedAt: z.number(), dvrId: z.string().optional(), rang: z.boolean() }).nullable(),
  lastMotion: z
    .object({
      at: z.number().optional(),
      receivedAt: z.number(),
      imageUrl: z.string().optional(),
      fallbackImageUrl: z.string().optional(),
      width: z.number().optional(),
      height: z.number().optional(),
      rang: z.boolean(),
    })
    .nullable(),
  /** The newest recording; `availableAt`: when its videoavailable arrived (absent in state saved by earlier versions). */
  lastVideo: z.object({ dvrId: z.string(), cause: z.string(), startTime: z.number().optional(), availableAt: z.number().optional() }).nullable(),
  /** Ordering marks per aspect; `video` is absent in state saved by earlier versions, which ordered by the raw `startTime`. */
  lastAt: z.object({ press: z.number().optional(), motion: z.number().optional(), video: z.number().optional() }),
  recent: z.array(recentEventSchema),
});

export type DoorbellState = z.infer<typeof doorbellStateSchema>;

export function initialDoorbellState(): DoorbellState {
  return { version: 1, lastPress: null, lastMotion: null, lastVideo: null, lastAt: {}, recent: [] };
}

export function parseDoorbellState(raw: unknown): DoorbellState | undefined {
  const parsed = doorbellStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

export interface DoorbellReduction {
  state: DoorbellState;
  /** A press that should ring phones now. */
  ring: boolean;
  /** A motion that should turn the MotionSensor on now. */
  motion: boolean;
  /** A new recording became available (not a redelivery, not an older one arriving late). */
  recording?: boolean;
  /** The newest motion still, to fetch as the snapshot. */
  snapshotUrl?: string;
  snapshotFallbackUrl?: string;
  /** Why nothing rang, in words (undefined when it did or the event never rings). */
  quietReason?: string;
  text: string;
}

/** Age of a press or motion: by the event's own time where the payload has one (a jumped clock's as the signature time), else by the signature time. */
export function eventAge(event: DoorbellEvent, context: DeliveryContext): number {
  return context.receivedAt - (deviceTime(event.at, context) ?? context.signedAt);
}

/** The time a recording is ordered by: when it started, else the event's time. */
function recordingTime(event: Extract<DoorbellEvent, { kind: 'videoAvailable' }>): number | undefined {
  return event.startTime ?? event.at;
}

/**
 * Ordering marks in the future become now. Earlier versions ordered recordings by the raw
 * `startTime` of the newest one, which a doorbell clock a year ahead left in the future: it
 * becomes the recordings' mark first, so it is repaired like the others.
 */
export function repairDoorbellMarks(state: DoorbellState, now: number): DoorbellState {
  const legacyVideo = state.lastAt.video === undefined ? state.lastVideo?.startTime : undefined;
  const marks = legacyVideo === undefined ? state.lastAt : { ...state.lastAt, video: legacyVideo };
  const lastAt = repairMarks(marks, now) ?? marks;
  return lastAt === state.lastAt ? state : { ...state, lastAt };
}

function remember(state: DoorbellState, entry: RecentEvent): RecentEvent[] {
  return [...state.recent, entry].slice(-RECENT_EVENTS);
}

export function reduceDoorbell(state: DoorbellState, event: DoorbellEvent, context: DeliveryContext): DoorbellReduction {
  const text = describeEvent(event, '');
  const note = (applied: boolean): RecentEvent[] => remember(state, { kind: event.kind, at: event.at, receivedAt: context.receivedAt, text, applied });
  const tooOld = eventAge(event, context) > MAX_RING_AGE_MS;
  switch (event.kind) {
    case 'doorbellPress': {
      if (event.dvrId !== undefined && state.lastPress?.dvrId === event.dvrId) {
        return { state: { ...state, recent: note(false) }, ring: false, motion: false, quietReason: 'the same press arrived twice', text };
      }
      const ordering = order(event.at, state.lastAt.press, context);
      if (ordering.stale) {
        return { state: { ...state, recent: note(false) }, ring: false, motion: false, quietReason: 'an older press arrived after a newer one', text };
      }
      const ring = !tooOld;
      const lastPress = { at: event.at, receivedAt: context.receivedAt, dvrId: event.dvrId, rang: ring };
      const lastAt = ordering.mark === undefined ? state.lastAt : { ...state.lastAt, press: ordering.mark };
      return {
        state: { ...state, lastPress, lastAt, recent: note(true) },
        ring,
        motion: false,
        ...(ring ? {} : { quietReason: 'it arrived more than 60 seconds late' }),
        text,
      };
    }
    case 'motion': {
      const ordering = order(event.at, state.lastAt.motion, context);
      if (ordering.stale) {
        return { state: { ...state, recent: note(false) }, ring: false, motion: false, quietReason: 'an older motion arrived after a newer one', text };
      }
      const motion = !tooOld;
      const lastMotion = { at: event.at, receivedAt: context.receivedAt, imageUrl: event.imageUrl, fallbackImageUrl: event.fallbackImageUrl, width: event.width, height: event.height, rang: motion };
      const lastAt = ordering.mark === undefined ? state.lastAt : { ...state.lastAt, motion: ordering.mark };
      return {
        state: { ...state, lastMotion, lastAt, recent: note(true) },
        ring: false,
        motion,
        ...(event.imageUrl === undefined ? {} : { snapshotUrl: event.imageUrl }),
        ...(event.fallbackImageUrl === undefined ? {} : { snapshotFallbackUrl: event.fallbackImageUrl }),
        ...(motion ? {} : { quietReason: 'it arrived more than 60 seconds late' }),
        text,
      };
    }
    case 'videoAvailable': {
      if (state.lastVideo?.dvrId === event.dvrId) return { state: { ...state, recent: note(false) }, ring: false, motion: false, text };
      const ordering = order(recordingTime(event), state.lastAt.video, context);
      if (ordering.stale) return { state: { ...state, recent: note(false) }, ring: false, motion: false, text };
      const lastVideo = { dvrId: event.dvrId, cause: event.cause, startTime: event.startTime, availableAt: context.receivedAt };
      const lastAt = ordering.mark === undefined ? state.lastAt : { ...state.lastAt, video: ordering.mark };
      return { state: { ...state, lastVideo, lastAt, recent: note(true) }, ring: false, motion: false, recording: true, text };
    }
  }
}

/** The newest recording when it became available within `minutes` of `now` (0 minutes: never). */
export function recentRecording(state: DoorbellState, minutes: number, now: number): { dvrId: string; cause: string; availableAt: number } | undefined {
  const video = state.lastVideo;
  if (video?.availableAt === undefined || minutes <= 0) return undefined;
  const age = now - video.availableAt;
  return age >= 0 && age <= minutes * 60_000 ? { dvrId: video.dvrId, cause: video.cause, availableAt: video.availableAt } : undefined;
}
