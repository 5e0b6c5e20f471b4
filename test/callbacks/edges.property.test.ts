// The dedupe identity and the ordering rules together, as the service exercises them: for any run
// of lock operations (with and without EventID, with and without event times, some stamped by a
// lock clock that runs fast) with true redeliveries (same bytes, same t) interleaved, the lock ends
// in the state of the last real operation. Driven through the pure path: accept() then the reducer.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { accept, type AcceptEnv, type CallbackRequest } from '../../src/callbacks/accept.js';
import { DedupeStore } from '../../src/callbacks/dedupe.js';
import { initialLockState, reduceLock, type LockState } from '../../src/model/lock-state.js';
import type { LockEvent } from '../../src/model/events.js';
import { Storage } from '../../src/storage.js';
import { LOCK_ID } from './fixtures.js';
import { API_KEY, NOW, TOKEN, signed } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-access-edges-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Operation {
  lock: boolean;
  withEventId: boolean;
  /** none: no event time; true: the lock's clock is right; fast: it runs ahead by this many ms. */
  stamp: 'none' | 'true' | number;
  /** The same person, from the app: the body of the same action is identical each time. */
  sameBody: boolean;
  /** How many true redeliveries follow (same bytes, same t), and how far later. */
  redeliveries: number;
  gapMs: number;
}

const operation: fc.Arbitrary<Operation> = fc.record({
  lock: fc.boolean(),
  withEventId: fc.boolean(),
  stamp: fc.oneof(fc.constant('none' as const), fc.constant('true' as const), fc.integer({ min: 2_001, max: 30 * 60_000 })),
  sameBody: fc.boolean(),
  redeliveries: fc.integer({ min: 0, max: 2 }),
  gapMs: fc.integer({ min: 1_000, max: 120_000 }),
});

describe('for any operations and redeliveries, the final state is the last real operation (property)', () => {
  it('holds through accept() and the lock reducer', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), async (operations) => {
        run += 1;
        const store = await DedupeStore.open({ storage: new Storage(join(dir, String(run))), now: () => NOW, debounceMs: 60_000 });
        const env: AcceptEnv = { apiKey: API_KEY, toleranceSeconds: 300, storedToken: () => TOKEN, sinkReady: () => true, dedupe: store };
        let state: LockState = initialLockState();
        let now = NOW;
        let sequence = 0;
        const deliver = (raw: Buffer, signature: string, receivedAt: number) => {
          const request: CallbackRequest = { route: 'lock', pathId: LOCK_ID, body: raw, signature, token: TOKEN, receivedAt };
          const verdict = accept(request, env);
          if (verdict.kind !== 'accepted') return;
          if (verdict.record.claim !== undefined && !store.checkAndSet(verdict.record.claim.key)) return;
          for (const event of verdict.events) state = reduceLock(state, event as LockEvent, verdict.context).state;
        };
        for (const op of operations) {
          now += op.gapMs;
          sequence += 1;
          const body: Record<string, unknown> = { LockID: LOCK_ID, EventType: 'operation', Event: op.lock ? 'lock' : 'unlock', Device: 'lock', User: { UserID: 'u-1', FirstName: 'Jamie' } };
          if (!op.sameBody) body.timeStamp = now;
          if (op.withEventId) body.EventID = `ev-${sequence}`;
          if (op.stamp === 'true') body.Timestamp = now;
          else if (typeof op.stamp === 'number') body.Timestamp = now + op.stamp;
          const t = Math.floor(now / 1000);
          const delivery = signed(body, { t });
          deliver(delivery.body, delivery.headers['x-svc-signature'] ?? '', now);
          // True redeliveries: the same bytes with the t they were first signed with, seconds later.
          for (let i = 0; i < op.redeliveries; i += 1) deliver(delivery.body, delivery.headers['x-svc-signature'] ?? '', now + (i + 1) * 30);
        }
        await store.close();
        expect(state.lock).toBe(operations.at(-1)?.lock === true ? 'locked' : 'unlocked');
      }),
      { numRuns: 150 },
    );
  });
});
