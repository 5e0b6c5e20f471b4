import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { QuietWriter } from '../../src/util/quiet-writer.js';

/** A file that records what was written when, and can be told to fail or to hang. */
function fakeFile() {
  const file = {
    state: 0,
    written: [] as { value: number; at: number }[],
    running: 0,
    mostAtOnce: 0,
    failNext: 0,
    hold: undefined as Promise<void> | undefined,
  };
  const write = async () => {
    const value = file.state;
    file.running += 1;
    file.mostAtOnce = Math.max(file.mostAtOnce, file.running);
    try {
      if (file.hold) await file.hold;
      if (file.failNext > 0) {
        file.failNext -= 1;
        throw new Error('disk full');
      }
      file.written.push({ value, at: Date.now() });
    } finally {
      file.running -= 1;
    }
  };
  return { file, write };
}

// The status file (\"Rejections are never silent\": counts within seconds), the event log
// and the duplicate filter (dedupe kept on disk) all write through this writer.
describe('quiet writer for status.json, events.json and dedupe.json', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a burst of changes is one write, after a quiet spell, carrying the last state', async () => {
    const { file, write } = fakeFile();
    const errors: unknown[] = [];
    const writer = new QuietWriter({ write, quietMs: 500, maxDelayMs: 10_000, onError: (e) => errors.push(e) });
    for (let i = 1; i <= 10; i += 1) {
      file.state = i;
      writer.touch();
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(file.written).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(file.written.map((w) => w.value)).toEqual([10]);
    expect(writer.pending).toBe(false);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(file.written).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('writes at most maxDelayMs late while changes never pause', async () => {
    const { file, write } = fakeFile();
    const start = Date.now();
    const writer = new QuietWriter({ write, quietMs: 1000, maxDelayMs: 5000, onError: () => undefined });
    for (let t = 0; t < 12_000; t += 250) {
      file.state = t;
      writer.touch();
      await vi.advanceTimersByTimeAsync(250);
    }
    expect(file.written.map((w) => w.at - start)).toEqual([5000, 10_000]);
  });

  it('nothing changed, nothing written: flush and close without a change do not write', async () => {
    const { file, write } = fakeFile();
    const writer = new QuietWriter({ write, quietMs: 500, maxDelayMs: 500, onError: () => undefined });
    await writer.flush();
    await writer.close();
    expect(file.written).toEqual([]);
  });

  it('never writes twice at once: a write due while one is in flight waits for it, then carries the newest state', async () => {
    const { file, write } = fakeFile();
    let release: () => void = () => undefined;
    file.hold = new Promise<void>((resolve) => (release = resolve));
    const writer = new QuietWriter({ write, quietMs: 100, maxDelayMs: 100, onError: () => undefined });
    file.state = 1;
    writer.touch();
    await vi.advanceTimersByTimeAsync(100);
    expect(file.running).toBe(1);
    file.state = 2;
    writer.touch();
    await vi.advanceTimersByTimeAsync(100);
    const flushed = writer.flush();
    await vi.advanceTimersByTimeAsync(1000);
    expect(file.running).toBe(1);
    file.hold = undefined;
    release();
    await flushed;
    expect(file.mostAtOnce).toBe(1);
    // The first write saw state 1 (read before it hung); the queued ones collapse into one write of 2.
    expect(file.written.map((w) => w.value)).toEqual([1, 2]);
  });

  it('a failed write is reported, keeps the change pending, and is retried with the next change', async () => {
    const { file, write } = fakeFile();
    const errors: string[] = [];
    const writer = new QuietWriter({ write, quietMs: 100, maxDelayMs: 100, onError: (e) => errors.push(e instanceof Error ? e.message : 'other') });
    file.failNext = 1;
    file.state = 1;
    writer.touch();
    await vi.advanceTimersByTimeAsync(100);
    expect(errors).toEqual(['disk full']);
    expect(writer.pending).toBe(true);
    // No retry loop of its own: nothing happens until something changes.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(file.written).toEqual([]);
    file.state = 2;
    writer.touch();
    await vi.advanceTimersByTimeAsync(100);
    expect(file.written.map((w) => w.value)).toEqual([2]);
    expect(writer.pending).toBe(false);
  });

  it('a failed write is retried by the flush on close', async () => {
    const { file, write } = fakeFile();
    const writer = new QuietWriter({ write, quietMs: 100, maxDelayMs: 100, onError: () => undefined });
    file.failNext = 1;
    file.state = 7;
    writer.touch();
    await vi.advanceTimersByTimeAsync(100);
    expect(file.written).toEqual([]);
    await writer.close();
    expect(file.written.map((w) => w.value)).toEqual([7]);
  });

  it('close writes pending changes at once and cancels the timer', async () => {
    const { file, write } = fakeFile();
    const writer = new QuietWriter({ write, quietMs: 60_000, maxDelayMs: 60_000, onError: () => undefined });
    file.state = 3;
    writer.touch();
    await writer.close();
    expect(file.written).toEqual([{ value: 3, at: 1_000_000 }]);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(file.written).toHaveLength(1);
  });

  it('markDirty schedules nothing, but its change goes out with the next write or the flush', async () => {
    const { file, write } = fakeFile();
    const writer = new QuietWriter({ write, quietMs: 100, maxDelayMs: 100, onError: () => undefined });
    file.state = 4;
    writer.markDirty();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(file.written).toEqual([]);
    expect(writer.pending).toBe(true);
    await writer.flush();
    expect(file.written.map((w) => w.value)).toEqual([4]);
  });

  it('an error handler that throws breaks neither the chain nor the process', async () => {
    const { file, write } = fakeFile();
    const writer = new QuietWriter({ write, quietMs: 100, maxDelayMs: 100, onError: () => { throw new Error('logger gone'); } });
    file.failNext = 1;
    writer.touch();
    await vi.advanceTimersByTimeAsync(100);
    await expect(writer.flush()).resolves.toBeUndefined();
    expect(file.written).toHaveLength(1);
  });
});
