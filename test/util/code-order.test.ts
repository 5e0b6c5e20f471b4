import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { byCodeUnit } from '../../src/util/code-order.js';

describe('byCodeUnit: a language-free order for ids and keys', () => {
  it('orders as Array#sort does without a comparator', () => {
    fc.assert(
      fc.property(fc.array(fc.string()), (items) => {
        expect([...items].sort(byCodeUnit)).toEqual([...items].sort());
      }),
    );
  });

  it('puts upper case before lower case and digits first, unlike a collator', () => {
    expect(['lock:b', 'doorbell:Z', 'lock:A', 'lock:1'].sort(byCodeUnit)).toEqual(['doorbell:Z', 'lock:1', 'lock:A', 'lock:b']);
    expect(byCodeUnit('same', 'same')).toBe(0);
  });
});
