import { uiMessage } from '../../src/util/ui-message.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { SelfCheckOutcome } from '../../src/cloud/startup-checks.js';
import { SELF_CHECK_EVERY_MS, SELF_CHECK_RETRY_MS, SelfCheckWatch, type SelfCheckRecord } from '../../src/status/self-check-watch.js';

const URL_SHOWN = 'https://home.example.net/lock-access/health';

function setup(results: boolean[]) {
  const outcomes = [...results];
  const records: SelfCheckRecord[] = [];
  const lines: { level: string; message: string }[] = [];
  let checks = 0;
  const watch = new SelfCheckWatch({
    check: (): Promise<SelfCheckOutcome> => {
      checks += 1;
      const ok = outcomes.shift() ?? true;
      return Promise.resolve({ ok, url: URL_SHOWN, message: ok ? uiMessage('selfCheck.ok', {}, 'reaches the listener') : uiMessage('selfCheck.unreachable', {}, 'the address did not answer (ECONNREFUSED).') });
    },
    publish: (record) => records.push(record),
    log: {
      info: (m) => lines.push({ level: 'info', message: m }),
      warn: (m) => lines.push({ level: 'warn', message: m }),
      error: (m) => lines.push({ level: 'error', message: m }),
      debug: (m) => lines.push({ level: 'debug', message: m }),
    },
    now: () => Date.now(),
    setTimer: (fn, ms) => setTimeout(fn, ms),
    clearTimer: (handle) => {
      clearTimeout(handle as NodeJS.Timeout);
    },
  });
  return { watch, records, lines, checks: () => checks };
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-11-24T10:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the self-check keeps watching', () => {
  it('repeats every hour while it passes, and the status says when it last passed and when it runs next', async () => {
    const { watch, records, checks } = setup([true, true, true]);
    await watch.runNow();
    expect(records.at(-1)).toMatchObject({ state: 'ok', lastPassedAt: Date.now(), nextAt: Date.now() + SELF_CHECK_EVERY_MS });
    await vi.advanceTimersByTimeAsync(SELF_CHECK_EVERY_MS - 1);
    expect(checks()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(checks()).toBe(2);
    await vi.advanceTimersByTimeAsync(SELF_CHECK_EVERY_MS);
    expect(checks()).toBe(3);
    expect(records.at(-1)?.history.map((h) => h.ok)).toEqual([true, true, true]);
    watch.stop();
  });

  it('after a failure it tries again sooner, backing off (1, 2, 5, 10, 30 minutes, then hourly), and keeps the last pass', async () => {
    const { watch, records, checks } = setup([true, false, false, false, false, false, false, false]);
    await watch.runNow();
    const passedAt = Date.now();
    await vi.advanceTimersByTimeAsync(SELF_CHECK_EVERY_MS);
    expect(checks()).toBe(2);
    expect(records.at(-1)).toMatchObject({ state: 'failed', lastPassedAt: passedAt });
    for (const [i, delay] of SELF_CHECK_RETRY_MS.entries()) {
      expect(records.at(-1)?.nextAt).toBe(Date.now() + delay);
      await vi.advanceTimersByTimeAsync(delay - 1);
      expect(checks()).toBe(2 + i);
      await vi.advanceTimersByTimeAsync(1);
      expect(checks()).toBe(3 + i);
    }
    expect(records.at(-1)?.nextAt).toBe(Date.now() + SELF_CHECK_EVERY_MS);
    watch.stop();
  });

  it('a change from passing to failing is one warning; further failures are no more warnings; passing again is said', async () => {
    const { watch, lines } = setup([true, false, false, true]);
    await watch.runNow();
    await vi.advanceTimersByTimeAsync(SELF_CHECK_EVERY_MS);
    await vi.advanceTimersByTimeAsync(SELF_CHECK_RETRY_MS[0]);
    await vi.advanceTimersByTimeAsync(SELF_CHECK_RETRY_MS[1]);
    const warnings = lines.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/^Self-check now fails \(it passed at .*\): the address did not answer/);
    expect(lines.filter((l) => l.level === 'info').map((l) => l.message)).toEqual([
      `Self-check passed: ${URL_SHOWN} reaches this webhook listener.`,
      `Self-check passes again: ${URL_SHOWN} reaches this webhook listener.`,
    ]);
    watch.stop();
  });

  it('a first check that fails warns at once; stop() ends the schedule', async () => {
    const { watch, lines, checks } = setup([false]);
    await watch.runNow();
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    watch.stop();
    await vi.advanceTimersByTimeAsync(10 * SELF_CHECK_EVERY_MS);
    expect(checks()).toBe(1);
  });
});
