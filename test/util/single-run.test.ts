import { describe, expect, it } from 'vitest';

import { SingleRun } from '../../src/util/single-run.js';

describe('run at most one at a time, once more if asked meanwhile', () => {
  it('requests during a run are folded into one more run after it', async () => {
    let release: () => void = () => undefined;
    let runs = 0;
    const single = new SingleRun(() => {
      runs += 1;
      return new Promise<void>((resolve) => { release = resolve; });
    }, () => undefined);
    single.request();
    single.request();
    single.request();
    expect(runs).toBe(1);
    release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(2);
    release();
    await single.current;
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(2);
    expect(single.current).toBeUndefined();
  });

  it('a failing run reports its error and does not stop later runs; once stopped nothing runs', async () => {
    const errors: unknown[] = [];
    let stopped = false;
    let runs = 0;
    const single = new SingleRun(() => { runs += 1; return Promise.reject(new Error('boom')); }, (e) => errors.push(e), () => stopped);
    single.request();
    await new Promise((resolve) => setImmediate(resolve));
    single.request();
    await new Promise((resolve) => setImmediate(resolve));
    expect(runs).toBe(2);
    expect(errors).toHaveLength(2);
    stopped = true;
    single.request();
    expect(runs).toBe(2);
  });
});
