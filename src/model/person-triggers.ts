// When a person's unlock or lock becomes an automation trigger. Pure: the lock device passes what
// it knows (applied or not, when it arrived, the last event that fired) and announces a trigger
// only when this says so; HomeKit presses that person's switch.
import { MAX_RING_AGE_MS } from '../settings.js';
import type { Person } from './device-entry.js';
import type { LockEvent } from './events.js';


/** SINGLE_PRESS when the person unlocks, DOUBLE_PRESS when they lock. */
export type Press = 'single' | 'double';

export interface TriggerContext {
  /** When the callback arrived and the time its signature carries (epoch ms). */
  receivedAt: number;
  signedAt: number;
  /** false when the ordering rule left the state unchanged (an older event arrived late). */
  applied: boolean;
  /** The userIds with a switch. */
  people: ReadonlySet<string>;
  /** The key of the last event that fired on this lock (see triggerKey). */
  lastFired: string | undefined;
}

/** A trigger that fired: whose switch, and which press. */
export interface Trigger {
  userId: string;
  press: Press;
}

export type TriggerDecision =
  | { fire: true; userId: string; press: Press; key: string | undefined }
  | { fire: false; reason: string };

/** An event's identity for "the same event again": its EventID, else who, what and when. */
export function triggerKey(event: Extract<LockEvent, { kind: 'lockState' }>): string | undefined {
  if (event.eventId !== undefined) return `id:${event.eventId}`;
  if (event.at === undefined) return undefined;
  return `at:${event.actor.userId ?? ''}:${event.state}:${String(event.at)}`;
}

/**
 * Fires once per real event: a person's own operation (app, API or keypad) that was applied, is not
 * the event that fired last (a redelivery that got past the dedupe, e.g. one with a new body), and
 * is at most 60 s old by its own time (else by the signature's time), like a doorbell ring.
 */
export function personTrigger(event: LockEvent, context: TriggerContext): TriggerDecision {
  if (event.kind !== 'lockState') return NOT_AN_OPERATION;
  if (event.source !== 'operation') return A_REPORT;
  const userId = event.actor.userId;
  if (event.actor.kind !== 'person' || userId === undefined) return NOT_A_PERSON;
  if (!context.people.has(userId)) return { fire: false, reason: 'this person has no trigger' };
  if (!context.applied) return { fire: false, reason: 'an older event arrived after a newer one' };
  const key = triggerKey(event);
  if (key !== undefined && key === context.lastFired) return { fire: false, reason: 'the same event arrived twice' };
  const age = context.receivedAt - (event.at ?? context.signedAt);
  if (age > MAX_RING_AGE_MS) return { fire: false, reason: 'it arrived more than 60 seconds late' };
  return { fire: true, userId, press: event.state === 'unlocked' ? 'single' : 'double', key };
}

// The answers for most events, made once: every lock callback asks.
const NOT_AN_OPERATION: TriggerDecision = { fire: false, reason: 'not a lock operation' };
const A_REPORT: TriggerDecision = { fire: false, reason: 'a status report, not an action' };
const NOT_A_PERSON: TriggerDecision = { fire: false, reason: 'not done by a person' };

/** The switch subtype of a person. */
export function personSubtype(userId: string): string {
  return `person:${userId}`;
}

/** Reasons a trigger stays quiet that someone waiting for an automation wants to read. */
const WORTH_SAYING = new Set(['it arrived more than 60 seconds late', 'the same event arrived twice', 'an older event arrived after a newer one']);

/** The log line a decision is worth, if any (for the lock's own logger): a trigger at debug, a surprising silence at info. */
export function triggerLine(decision: TriggerDecision, event: LockEvent, people: readonly Person[]): { level: 'debug' | 'info'; text: string } | undefined {
  const nameOf = (userId: string | undefined) => (userId === undefined ? 'the person' : (people.find((p) => p.userId === userId)?.name ?? userId));
  if (decision.fire) return { level: 'debug', text: `${nameOf(decision.userId)}'s automation trigger: ${decision.press} press.` };
  if (!WORTH_SAYING.has(decision.reason)) return undefined;
  const userId = event.kind === 'lockState' ? event.actor.userId : undefined;
  return { level: 'info', text: `${nameOf(userId)}'s automation trigger stays quiet: ${decision.reason}.` };
}
