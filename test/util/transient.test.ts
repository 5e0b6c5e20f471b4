import { describe, expect, it } from 'vitest';

import { transient } from '../../src/util/transient.js';

describe('a transient value', () => {
  it('is made on first use and the same one is handed out while it is held', () => {
    let made = 0;
    const value = transient(() => ({ n: ++made }));
    expect(made).toBe(0);
    const first = value();
    expect(value()).toBe(first);
    expect(made).toBe(1);
  });
});
