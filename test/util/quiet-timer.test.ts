import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { QuietTimer } from '../../src/util/quiet-timer.js';

describe('QuietTimer (under the quiet writer), one run after a burst, never later than the longest delay', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs once, after a whole quiet spell that follows the last change of a burst', () => {
    let runs = 0;
    const timer = new QuietTimer(() => (runs += 1), 1000, 10_000);
    for (let i = 0; i < 5; i += 1) {
      timer.touch();
      vi.advanceTimersByTime(300);
    }
    // The last change was 300 ms ago: at least one more quiet second must pass.
    vi.advanceTimersByTime(699);
    expect(runs).toBe(0);
    // ...and within two.
    vi.advanceTimersByTime(1000);
    expect(runs).toBe(1);
    vi.advanceTimersByTime(60_000);
    expect(runs).toBe(1);
  });

  it('runs at the longest delay while changes keep coming, then starts over', () => {
    const at: number[] = [];
    const start = Date.now();
    const timer = new QuietTimer(() => at.push(Date.now() - start), 1000, 5000);
    for (let t = 0; t < 12_000; t += 500) {
      timer.touch();
      vi.advanceTimersByTime(500);
    }
    expect(at).toEqual([5000, 10_000]);
  });

  it('cancel drops the pending run', () => {
    let runs = 0;
    const timer = new QuietTimer(() => (runs += 1), 1000, 5000);
    timer.touch();
    timer.cancel();
    vi.advanceTimersByTime(10_000);
    expect(runs).toBe(0);
    timer.touch();
    vi.advanceTimersByTime(1000);
    expect(runs).toBe(1);
  });
});
