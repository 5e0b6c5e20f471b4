// The duplicate filter's table against a plain model: a list of [digest, expiresAt, earlier], oldest
// first, each digest once. Small tables, so probe runs collide, wrap and shift back on every drop.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { DIGEST_BYTES, DigestTable } from '../../src/callbacks/digest-table.js';

/** Digest `n`: the same first bytes for many n, so they share a home in the index. */
const digest = (n: number): Uint8Array => {
  const bytes = new Uint8Array(DIGEST_BYTES);
  bytes[0] = n % 3;
  bytes[15] = n;
  return bytes;
};

describe('the digest table', () => {
  it('finds, replaces and drops like a list for any sequence of adds and drops', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.oneof(fc.record({ add: fc.integer({ min: 0, max: 20 }), earlier: fc.boolean() }), fc.constant('drop' as const)), { maxLength: 300 }),
        (maxLive, steps) => {
          const table = new DigestTable(maxLive);
          let model: [number, number, boolean][] = [];
          let time = 0;
          for (const step of steps) {
            time += 1;
            if (step === 'drop') {
              table.dropOldest();
              model = model.slice(1);
            } else {
              const known = model.some(([n]) => n === step.add);
              // The owner keeps the bound: the oldest leaves before a new digest comes in.
              if (!known && model.length >= maxLive) {
                table.dropOldest();
                model = model.slice(1);
              }
              table.add(digest(step.add), time, step.earlier);
              model = [...model.filter(([n]) => n !== step.add), [step.add, time, step.earlier]];
            }
            expect(table.size).toBe(model.length);
            expect(table.earlier).toBe(model.filter(([, , earlier]) => earlier).length);
            expect(table.oldestExpiry()).toBe(model[0]?.[1]);
            for (let n = 0; n <= 20; n += 1) expect(table.expiry(digest(n))).toBe(model.find(([m]) => m === n)?.[1]);
          }
          expect([...table.entries()].map(({ digest: d, expiresAt, earlier }) => [d[15], expiresAt, earlier])).toEqual(model);
        },
      ),
      { numRuns: 300 },
    );
  });
});
