import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { LogLimiter } from '../../src/util/log-limiter.js';

function capture() {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => lines.push({ level, message });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') } };
}

describe('LogLimiter keeps event lines at a household pace, floods summed up', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes a burst, then the steady rate, and sums up the rest in one line', () => {
    const { lines, log } = capture();
    const limiter = new LogLimiter(log, { burst: 5, perSecond: 2, summaryDelayMs: 10_000 });
    for (let i = 0; i < 20; i += 1) limiter.info(`event ${String(i)}`);
    expect(lines.filter((l) => l.level === 'info').map((l) => l.message)).toEqual(['event 0', 'event 1', 'event 2', 'event 3', 'event 4']);
    // Left-out lines still reach debug.
    expect(lines.filter((l) => l.level === 'debug')).toHaveLength(15);
    vi.advanceTimersByTime(1000);
    limiter.info('after a second');
    limiter.info('second of the second');
    limiter.info('one too many');
    expect(lines.filter((l) => l.level === 'info').slice(-2).map((l) => l.message)).toEqual(['after a second', 'second of the second']);
    vi.advanceTimersByTime(9000);
    const summary = lines.filter((l) => l.level === 'info').at(-1)?.message ?? '';
    expect(summary).toMatch(/^16 event lines were left out of this log in the last 10 s, because events arrived faster than 2 a second/);
  });

  it('never holds back warnings or errors, and a quiet log writes no summary', () => {
    const { lines, log } = capture();
    const limiter = new LogLimiter(log, { burst: 1, perSecond: 1 });
    limiter.info('one');
    for (let i = 0; i < 10; i += 1) limiter.warn('offline');
    limiter.error('failed');
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(10);
    expect(lines.filter((l) => l.level === 'error')).toHaveLength(1);
    limiter.flush();
    expect(lines.filter((l) => l.level === 'info')).toHaveLength(1);
  });

  it('refills over time up to the burst, not beyond it', () => {
    const { lines, log } = capture();
    const limiter = new LogLimiter(log, { burst: 3, perSecond: 1 });
    vi.advanceTimersByTime(60_000);
    for (let i = 0; i < 5; i += 1) limiter.info(`e${String(i)}`);
    expect(lines.filter((l) => l.level === 'info')).toHaveLength(3);
    limiter.flush();
    expect(lines.filter((l) => l.level === 'info').at(-1)?.message).toMatch(/^2 event lines were left out/);
  });
});
