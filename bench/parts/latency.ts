// Part 1: end-to-end latency, from the first byte of a signed callback POST to the characteristic
// event at a paired hap-controller, per kind, for this plugin and for the bare plugin in one run.
import { randomUUID } from 'node:crypto';

import { doorbellButtonPush, doorbellMotion, doorState, lockOperation, manualOperation } from '../../test/sim/payloads.js';
import { BENCH_PERSON, type BenchEnv, type Subject } from '../lib/env.js';
import { HAP_TYPE, refOf, type HapEvent } from '../lib/hap-client.js';
import { postSigned, type Target } from '../lib/post.js';
import { ratio, round, summarise, type Summary } from '../lib/stats.js';
import { firstLine, fmt, type Goal, goal, type PartResult, type RunOptions } from '../lib/types.js';

const EVENT_TIMEOUT_MS = 10_000;

type Kind = 'doorbellPress' | 'motion' | 'door' | 'lockEvent' | 'lockRead' | 'personTrigger';

const KIND_LABEL: Record<Kind, string> = {
  doorbellPress: 'doorbell press (ProgrammableSwitchEvent)',
  motion: 'motion (MotionDetected)',
  door: 'door open/close (ContactSensorState)',
  lockEvent: 'lock/unlock event (LockCurrentState)',
  lockRead: 'lock/unlock, HAP read returns new value',
  personTrigger: 'person trigger (ProgrammableSwitchEvent)',
};

/** p99 goal per kind in ms (the lock-state event floor is HAP's 250 ms coalescing). */
const P99_GOAL: Record<Kind, number> = { doorbellPress: 20, motion: 20, door: 20, lockEvent: 260, lockRead: 20, personTrigger: 20 };
/** Kinds the bare plugin has nothing for; they are compared with the doorbell ring of the same run instead. */
const OURS_ONLY = new Set<Kind>(['personTrigger']);
/** A person trigger is a ProgrammableSwitchEvent like the doorbell's ring: at most this much slower (p99). */
const PERSON_VS_RING = 1.5;

interface KindResult {
  summary: Summary;
  /** Events whose characteristic change never arrived within the timeout. */
  lost: number;
  /** Callbacks not answered 200. */
  rejected: number;
  /** Median time until the HTTP answer, for reference. */
  answerP50: number;
}

function asNumber(value: unknown): number {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return Number(value);
}

/** Resolves a waiter when the subscribed characteristic reports the expected value. */
class Waiters {
  private readonly waiting = new Map<string, { value: number; resolve: (at: number | undefined) => void; timer: NodeJS.Timeout }>();
  readonly last = new Map<string, number>();

  readonly onEvent = (event: HapEvent): void => {
    const key = `${event.aid}.${event.iid}`;
    const value = asNumber(event.value);
    this.last.set(key, value);
    const waiter = this.waiting.get(key);
    if (waiter && waiter.value === value) {
      this.waiting.delete(key);
      clearTimeout(waiter.timer);
      waiter.resolve(event.at);
    }
  };

  wait(id: string, value: number): Promise<number | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(undefined);
      }, EVENT_TIMEOUT_MS);
      this.waiting.set(id, { value, resolve, timer });
    });
  }
}

let lastStamp = 0;
/** Strictly increasing event times, so the ordering rule never drops a benchmark event. */
function stamp(): number {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return lastStamp;
}

interface Step {
  target: Target;
  payload: object;
  id: string;
  expect: number;
}

async function readInitial(subject: Subject, ids: string[]): Promise<Map<string, number>> {
  const client = subject.bridge.client();
  const values = new Map<string, number>();
  const result = await client.getCharacteristics(ids);
  for (const c of result.characteristics) values.set(`${Number(c.aid)}.${Number(c.iid)}`, asNumber(c.value));
  await client.close();
  return values;
}

/** Sends each step's callback and waits for its event; `wave` steps go out at once. */
async function measureEvents(subject: Subject, ids: string[], steps: (state: Map<string, number>, i: number) => Step[], total: number): Promise<KindResult> {
  const waiters = new Waiters();
  const state = await readInitial(subject, ids);
  const sub = await subject.bridge.subscribe(ids, waiters.onEvent);
  const samples: number[] = [];
  const answers: number[] = [];
  let lost = 0;
  let rejected = 0;
  try {
    for (let i = 0; samples.length + lost < total; i += 1) {
      const wave = steps(state, i);
      await Promise.all(
        wave.map(async (step) => {
          const arrived = waiters.wait(step.id, step.expect);
          const sent = await postSigned(step.target, step.payload);
          if (sent.status !== 200) rejected += 1;
          answers.push(sent.t1 - sent.t0);
          const at = await arrived;
          if (at === undefined) {
            lost += 1;
            // Re-read so one lost event does not make every later expectation wrong.
            state.set(step.id, (await readInitial(subject, [step.id])).get(step.id) ?? step.expect);
          } else {
            samples.push(at - sent.t0);
            state.set(step.id, step.expect);
          }
        }),
      );
    }
  } finally {
    await sub.close();
  }
  return { summary: summarise(samples), lost, rejected, answerP50: summarise(answers).p50 };
}

async function measureReads(subject: Subject, total: number): Promise<KindResult> {
  const locks = subject.fleet.locks;
  const refs = locks.map((l) => refOf(subject.bridge.index, l.name, HAP_TYPE.lockCurrentState));
  const state = await readInitial(subject, refs.map((r) => r.id));
  const reader = subject.bridge.client();
  const samples: number[] = [];
  const answers: number[] = [];
  let lost = 0;
  let rejected = 0;
  try {
    for (let i = 0; i < total; i += 1) {
      const index = i % locks.length;
      const lock = locks[index];
      const ref = refs[index];
      if (!lock || !ref) continue;
      const expect = state.get(ref.id) === 1 ? 0 : 1;
      const payload = manualOperation({ lockId: lock.id, event: expect === 1 ? 'lock' : 'unlock', at: stamp(), eventId: randomUUID() });
      const sending = postSigned(subject.lockTarget(lock.id), payload);
      let seenAt: number | undefined;
      // Poll from the moment the request is out until a read returns the new value.
      const deadline = performance.now() + EVENT_TIMEOUT_MS;
      while (performance.now() < deadline) {
        const result = await reader.getCharacteristics([ref.id]);
        const value = asNumber(result.characteristics[0]?.value);
        if (value === expect) {
          seenAt = performance.now();
          break;
        }
      }
      const sent = await sending;
      answers.push(sent.t1 - sent.t0);
      if (sent.status !== 200) rejected += 1;
      if (seenAt === undefined) lost += 1;
      else samples.push(seenAt - sent.t0);
      state.set(ref.id, expect);
    }
  } finally {
    await reader.close();
  }
  return { summary: summarise(samples), lost, rejected, answerP50: summarise(answers).p50 };
}

/** Where motion stills are fetched from: the simulator's media route, as the service would serve them. */
let stillBase = '';

async function measureMotion(subject: Subject, total: number): Promise<KindResult> {
  const bells = subject.fleet.doorbells;
  const refs = bells.map((b) => refOf(subject.bridge.index, b.name, HAP_TYPE.motionDetected));
  const ids = refs.map((r) => r.id);
  const waiters = new Waiters();
  const initial = await readInitial(subject, ids);
  for (const [id, value] of initial) waiters.last.set(id, value);
  const sub = await subject.bridge.subscribe(ids, waiters.onEvent);
  const samples: number[] = [];
  const answers: number[] = [];
  let lost = 0;
  let rejected = 0;
  try {
    let next = 0;
    while (samples.length + lost < total) {
      // MotionDetected only reports a change, so each doorbell must have gone back to false
      // (after its 1 s motion timeout) before it is triggered again.
      let index = -1;
      for (let k = 0; k < bells.length; k += 1) {
        const candidate = (next + k) % bells.length;
        if (waiters.last.get(ids[candidate] ?? '') === 0) {
          index = candidate;
          break;
        }
      }
      if (index < 0) {
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      next = index + 1;
      const bell = bells[index];
      const id = ids[index];
      if (!bell || !id) continue;
      waiters.last.set(id, 1);
      const arrived = waiters.wait(id, 1);
      const payload = doorbellMotion({ doorbellId: bell.id, url: `${stillBase}/media/motion/${encodeURIComponent(bell.id)}/${randomUUID()}.jpg`, width: 320, height: 240 });
      const sent = await postSigned(subject.doorbellTarget(bell.id), payload);
      answers.push(sent.t1 - sent.t0);
      if (sent.status !== 200) rejected += 1;
      const at = await arrived;
      if (at === undefined) lost += 1;
      else samples.push(at - sent.t0);
    }
  } finally {
    await sub.close();
  }
  return { summary: summarise(samples), lost, rejected, answerP50: summarise(answers).p50 };
}

async function measure(kind: Kind, subject: Subject, total: number): Promise<KindResult> {
  const { locks, doorbells } = subject.fleet;
  const index = subject.bridge.index;
  switch (kind) {
    case 'doorbellPress': {
      const refs = doorbells.map((b) => refOf(index, b.name, HAP_TYPE.programmableSwitchEvent));
      return measureEvents(subject, refs.map((r) => r.id), (_state, i) => {
        const k = i % doorbells.length;
        const bell = doorbells[k];
        const ref = refs[k];
        if (!bell || !ref) return [];
        return [{ target: subject.doorbellTarget(bell.id), payload: doorbellButtonPush({ doorbellId: bell.id, dvrId: randomUUID() }), id: ref.id, expect: 0 }];
      }, total);
    }
    case 'door': {
      const refs = locks.map((l) => refOf(index, l.name, HAP_TYPE.contactSensorState));
      return measureEvents(subject, refs.map((r) => r.id), (state, i) => {
        const k = i % locks.length;
        const lock = locks[k];
        const ref = refs[k];
        if (!lock || !ref) return [];
        const expect = state.get(ref.id) === 1 ? 0 : 1;
        return [{ target: subject.lockTarget(lock.id), payload: doorState({ lockId: lock.id, state: expect === 1 ? 'open' : 'closed', at: stamp(), eventId: randomUUID() }), id: ref.id, expect }];
      }, total);
    }
    case 'lockEvent': {
      // Waves of 20 locks: every wave starts a fresh 250 ms coalescing window, like sparse real events.
      const refs = locks.map((l) => refOf(index, l.name, HAP_TYPE.lockCurrentState));
      const wave = 20;
      return measureEvents(subject, refs.map((r) => r.id), (state, i) => {
        const steps: Step[] = [];
        for (let j = 0; j < wave; j += 1) {
          const k = (i * wave + j) % locks.length;
          const lock = locks[k];
          const ref = refs[k];
          if (!lock || !ref) continue;
          const expect = state.get(ref.id) === 1 ? 0 : 1;
          steps.push({ target: subject.lockTarget(lock.id), payload: manualOperation({ lockId: lock.id, event: expect === 1 ? 'lock' : 'unlock', at: stamp(), eventId: randomUUID() }), id: ref.id, expect });
        }
        return steps;
      }, total);
    }
    case 'personTrigger': {
      // The person's keypad unlock (single press) and lock (double press), alternating per lock.
      const refs = locks.map((l) => refOf(index, l.name, HAP_TYPE.programmableSwitchEvent));
      return measureEvents(subject, refs.map((r) => r.id), (_state, i) => {
        const k = i % locks.length;
        const lock = locks[k];
        const ref = refs[k];
        if (!lock || !ref) return [];
        const unlock = Math.floor(i / locks.length) % 2 === 0;
        const payload = lockOperation({ lockId: lock.id, event: unlock ? 'unlock' : 'lock', device: 'keypad', user: BENCH_PERSON, at: stamp(), eventId: randomUUID() });
        return [{ target: subject.lockTarget(lock.id), payload, id: ref.id, expect: unlock ? 0 : 1 }];
      }, total);
    }
    case 'lockRead':
      return measureReads(subject, total);
    case 'motion':
      return measureMotion(subject, total);
  }
}

export async function runLatency(options: RunOptions, env: BenchEnv): Promise<PartResult> {
  const started = performance.now();
  const counts: Record<Kind, number> = options.quick
    ? { doorbellPress: 100, motion: 40, door: 100, lockEvent: 100, lockRead: 100, personTrigger: 100 }
    : { doorbellPress: 1000, motion: 200, door: 1000, lockEvent: 1000, lockRead: 1000, personTrigger: 1000 };
  stillBase = (await env.sim()).url.replace(/\/+$/, '');
  const bare = await env.bare();
  const notes: string[] = [];
  let ours: Subject | undefined;
  try {
    ours = await env.ours();
  } catch (error) {
    notes.push(`The plugin could not be started, so only the bare plugin was measured: ${firstLine(error)}`);
  }
  const kinds = Object.keys(counts) as Kind[];
  const results: Record<string, Partial<Record<'ours' | 'bare', KindResult>>> = {};
  for (const [n, kind] of kinds.entries()) {
    // Alternate which subject goes first so slow drifts in machine load do not favour one side.
    const order = [bare, ours].filter((s): s is Subject => s !== undefined && !(OURS_ONLY.has(kind) && s.label === 'bare'));
    if (n % 2 === 1) order.reverse();
    results[kind] = {};
    for (const subject of order) {
      const result = await measure(kind, subject, counts[kind]);
      results[kind][subject.label] = result;
      options.log(`latency ${kind} ${subject.label}: p50 ${result.summary.p50} ms, p99 ${result.summary.p99} ms, max ${result.summary.max} ms, lost ${result.lost}, rejected ${result.rejected}`);
    }
  }
  const goals: Goal[] = [];
  const rows: string[][] = [];
  for (const kind of kinds) {
    const o = results[kind]?.ours;
    // Ours-only kinds are compared with the doorbell ring of this plugin in the same run.
    const b = OURS_ONLY.has(kind) ? results.doorbellPress?.ours : results[kind]?.bare;
    const show = (r: KindResult | undefined) => (r ? `${fmt(r.summary.p50)} / ${fmt(r.summary.p99)} / ${fmt(r.summary.max)}` : 'n/a');
    const r50 = o && b ? ratio(o.summary.p50, b.summary.p50) : Number.NaN;
    const r99 = o && b ? ratio(o.summary.p99, b.summary.p99) : Number.NaN;
    if (OURS_ONLY.has(kind)) {
      rows.push([KIND_LABEL[kind], String(o?.summary.count ?? 0), show(o), 'n/a (vs this plugin\'s doorbell ring)', `${fmt(r50, 2)} / ${fmt(r99, 2)}`, `${o ? o.lost + o.rejected : 'n/a'} / n/a`]);
      if (o) {
        goals.push(goal(`${KIND_LABEL[kind]} p99`, `< ${P99_GOAL[kind]} ms`, `${fmt(o.summary.p99)} ms`, o.summary.p99 < P99_GOAL[kind] && o.lost === 0));
        if (b) goals.push(goal(`${KIND_LABEL[kind]} vs doorbell ring (p99, same run)`, `<= ${PERSON_VS_RING}x`, `${fmt(r99, 2)}x`, r99 <= PERSON_VS_RING));
      }
      continue;
    }
    rows.push([KIND_LABEL[kind], String(o?.summary.count ?? b?.summary.count ?? 0), show(o), show(b), `${fmt(r50, 2)} / ${fmt(r99, 2)}`, `${o ? o.lost + o.rejected : 'n/a'} / ${b ? b.lost + b.rejected : 'n/a'}`]);
    if (o) {
      goals.push(goal(`${KIND_LABEL[kind]} p99`, `< ${P99_GOAL[kind]} ms`, `${fmt(o.summary.p99)} ms`, o.summary.p99 < P99_GOAL[kind] && o.lost === 0));
      if (b) goals.push(goal(`${KIND_LABEL[kind]} vs bare plugin (p99)`, '<= 1.5x', `${fmt(r99, 2)}x`, r99 <= 1.5));
    }
  }
  notes.push('Latency is measured from the moment the signed POST is handed to the socket until the hap-controller in the same process decodes the event (or, for reads, until a GET /characteristics returns the new value; reads are polled back to back on their own connection).');
  notes.push('HAP-NodeJS sends ProgrammableSwitchEvent, MotionDetected and ContactSensorState events at once and coalesces LockCurrentState events for 250 ms, which is the floor of the lock-state event row; lock events are sent in waves of 20 locks so each wave opens a fresh window.');
  notes.push('Person trigger: a keypad unlock or lock by the person configured in `people` presses their StatelessProgrammableSwitch on the lock (single press unlocked, double press locked); the bare plugin has no such switch, so its ratio column compares it with this plugin\'s doorbell ring (same event type, same run).');
  notes.push('Motion: each callback names a new still on the simulator, which the plugin fetches for the camera snapshot, as it would from the service. MotionDetected reports only changes, so each doorbell is triggered again only after its 1 s motion timeout has reset it; hence fewer samples.');
  return {
    part: 'latency',
    title: 'End-to-end latency (callback POST to HomeKit controller), ms',
    figures: { counts, results: Object.fromEntries(kinds.map((k) => [k, results[k]])) },
    table: { header: ['kind', 'n', 'this plugin p50 / p99 / max', 'bare plugin p50 / p99 / max', 'ratio p50 / p99', 'lost or rejected (ours / bare)'], rows },
    goals,
    notes,
    seconds: round((performance.now() - started) / 1000, 1),
  };
}
