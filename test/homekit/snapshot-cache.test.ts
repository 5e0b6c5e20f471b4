import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { ImageFetchError, imageFetcher } from '../../src/cloud/image-fetch.js';

const fetchImage = imageFetcher(true);
import { placeholder, PREFETCH_DELAY_MS, SnapshotCache, STILL_RETRY_DELAYS_MS } from '../../src/homekit/snapshot-cache.js';

describe('snapshot cache (latest still, or a bundled placeholder)', () => {
  let server: Server;
  let base: string;
  let hits: string[];

  beforeEach(async () => {
    hits = [];
    server = createServer((request, response) => {
      hits.push(request.url ?? '');
      if (request.url === '/still.jpg') {
        // answer a little later so concurrent requests overlap
        setTimeout(() => response.writeHead(200, { 'content-type': 'image/jpeg' }).end(Buffer.from('jpeg-bytes')), 30);
      } else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('the placeholder is a small JPEG (640x360, under 30 KB)', async () => {
    const image = await placeholder();
    expect(image.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
    expect(image.length).toBeLessThan(30 * 1024);
    // SOF0 marker carries height then width
    const sof = image.indexOf(Buffer.from([0xff, 0xc0]));
    expect(image.readUInt16BE(sof + 5)).toBe(360);
    expect(image.readUInt16BE(sof + 7)).toBe(640);
  });

  it('"concurrent snapshot requests merged into one fetch"', async () => {
    const cache = new SnapshotCache(fetchImage, () => undefined);
    cache.restore(`${base}/still.jpg`);
    const images = await Promise.all([cache.get(), cache.get(), cache.get()]);
    expect(images.map(String)).toEqual(['jpeg-bytes', 'jpeg-bytes', 'jpeg-bytes']);
    expect(hits).toEqual(['/still.jpg']);
    await cache.get();
    expect(hits).toHaveLength(1);
  });

  it('a new still is fetched shortly after the motion event, before anyone asks, and only once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const fetched: string[] = [];
      const cache = new SnapshotCache((url) => {
        fetched.push(url);
        return Promise.resolve(Buffer.from('jpeg-bytes'));
      }, () => undefined);
      cache.setSource('https://img/one.jpg');
      // The motion notification goes out first: nothing is fetched in the same turn.
      expect(fetched).toEqual([]);
      await vi.advanceTimersByTimeAsync(PREFETCH_DELAY_MS);
      expect(fetched).toEqual(['https://img/one.jpg']);
      expect(String(await cache.get())).toBe('jpeg-bytes');
      expect(fetched).toHaveLength(1);
      // Asked for before the prefetch: fetched then, and the prefetch does not fetch again.
      cache.setSource('https://img/two.jpg');
      expect(String(await cache.get())).toBe('jpeg-bytes');
      await vi.advanceTimersByTimeAsync(PREFETCH_DELAY_MS);
      expect(fetched).toEqual(['https://img/one.jpg', 'https://img/two.jpg']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a still fetched over HTTP is served as it came', async () => {
    const cache = new SnapshotCache(fetchImage, () => undefined);
    cache.setSource(`${base}/still.jpg`);
    expect(String(await cache.get())).toBe('jpeg-bytes');
    expect(hits).toEqual(['/still.jpg']);
  });

  it('no still, or a fetch that fails, gives the placeholder; the failure is reported once', async () => {
    const errors: string[] = [];
    const cache = new SnapshotCache(fetchImage, (message) => errors.push(message));
    expect((await cache.get()).equals(await placeholder())).toBe(true);
    cache.setSource(`${base}/missing.jpg`);
    expect((await cache.get()).equals(await placeholder())).toBe(true);
    expect((await cache.get()).equals(await placeholder())).toBe(true);
    expect(errors).toEqual(['the image server answered 404']);
    expect(hits).toEqual(['/missing.jpg']);
  });

  it('a still whose SecureURL cannot be fetched is loaded from its plain Url', async () => {
    const errors: string[] = [];
    const cache = new SnapshotCache(fetchImage, (message) => errors.push(message));
    cache.setSource(`${base}/missing.jpg`, `${base}/still.jpg`);
    expect((await cache.get()).toString()).toBe('jpeg-bytes');
    expect(errors).toEqual([]);
    expect(hits).toEqual(['/missing.jpg', '/still.jpg']);
  });
});

describe('a still that fails for a moment is tried again within the motion window', () => {
  it('two transient failures, then success: the placeholder meanwhile, the still after the back-off, no warning', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let calls = 0;
      const errors: string[] = [];
      const cache = new SnapshotCache(() => {
        calls += 1;
        return calls <= 2 ? Promise.reject(new ImageFetchError('the image server answered 503', true)) : Promise.resolve(Buffer.from('jpeg-bytes'));
      }, (message) => errors.push(message));
      const blank = await placeholder();
      cache.setSource('https://img/one.jpg');
      await vi.advanceTimersByTimeAsync(PREFETCH_DELAY_MS);
      expect(calls).toBe(1);
      expect((await cache.get()).equals(blank)).toBe(true);
      // Asking during the back-off does not hammer the server.
      expect(calls).toBe(1);
      await vi.advanceTimersByTimeAsync(STILL_RETRY_DELAYS_MS[0] ?? 0);
      expect(calls).toBe(2);
      await vi.advanceTimersByTimeAsync((STILL_RETRY_DELAYS_MS[1] ?? 0) - 1);
      expect(calls).toBe(2);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toBe(3);
      expect(String(await cache.get())).toBe('jpeg-bytes');
      expect(errors).toEqual([]);
      const total = STILL_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
      expect(total).toBeLessThan(30_000);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a failure that keeps up is given up after the last retry and reported once; a permanent one at once', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let calls = 0;
      const errors: string[] = [];
      const cache = new SnapshotCache(() => {
        calls += 1;
        return Promise.reject(new Error('fetch failed'));
      }, (message) => errors.push(message));
      cache.setSource('https://img/one.jpg');
      await vi.advanceTimersByTimeAsync(60_000);
      expect(calls).toBe(STILL_RETRY_DELAYS_MS.length + 1);
      expect(errors).toEqual(['fetch failed']);

      const refused: string[] = [];
      let permanentCalls = 0;
      const strict = new SnapshotCache(() => {
        permanentCalls += 1;
        return Promise.reject(new ImageFetchError('the image address is not http(s) (file:)', false));
      }, (message) => refused.push(message));
      strict.setSource('file:///etc/passwd');
      await vi.advanceTimersByTimeAsync(60_000);
      expect(permanentCalls).toBe(1);
      expect(refused).toEqual(['the image address is not http(s) (file:)']);
    } finally {
      vi.useRealTimers();
    }
  });
});


describe('still retries fit inside motionTimeoutSeconds', () => {
  /** A fetcher that fails transiently and records when (fake time) each attempt started. */
  function failing(): { fetch: (url: string) => Promise<Buffer>; starts: number[] } {
    const starts: number[] = [];
    return {
      starts,
      fetch: () => {
        starts.push(Date.now());
        return Promise.reject(new ImageFetchError('the image server answered 503', true));
      },
    };
  }

  it('a 5 s motion window: the back-off is scaled down, every attempt starts before motion ends, then one report', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000 });
    try {
      const { fetch, starts } = failing();
      const errors: string[] = [];
      const cache = new SnapshotCache(fetch, (message) => errors.push(message));
      const motionAt = Date.now();
      cache.setSource('https://img/one.jpg', undefined, 5_000);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(starts.length).toBe(STILL_RETRY_DELAYS_MS.length + 1);
      for (const start of starts) expect(start - motionAt).toBeLessThan(5_000);
      // still spaced apart, growing like the full schedule
      const gaps = starts.slice(1).map((start, i) => start - (starts[i] ?? 0));
      expect(gaps).toEqual([...gaps].sort((a, b) => a - b));
      expect(gaps[0]).toBeGreaterThan(0);
      expect(errors).toEqual(['the image server answered 503']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a 1 s motion window: no retry is scheduled after motion has ended', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000 });
    try {
      const starts: number[] = [];
      const errors: string[] = [];
      // each attempt takes 300 ms before it fails, so only some retries fit
      const cache = new SnapshotCache(() => {
        starts.push(Date.now());
        return new Promise((_resolve, reject) => setTimeout(() => { reject(new ImageFetchError('the image server answered 502', true)); }, 300));
      }, (message) => errors.push(message));
      const motionAt = Date.now();
      cache.setSource('https://img/one.jpg', undefined, 1_000);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(starts.length).toBeGreaterThanOrEqual(1);
      expect(starts.length).toBeLessThan(STILL_RETRY_DELAYS_MS.length + 1);
      for (const start of starts) expect(start - motionAt).toBeLessThan(1_000);
      expect(errors).toEqual(['the image server answered 502']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('the default 30 s window keeps the full 1, 3, 9 s schedule; a still restored at start-up has no window', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_000_000 });
    try {
      const motion = failing();
      const cache = new SnapshotCache(motion.fetch, () => undefined);
      cache.setSource('https://img/one.jpg', undefined, 30_000);
      await vi.advanceTimersByTimeAsync(60_000);
      const gaps = (starts: number[]) => starts.slice(1).map((start, i) => start - (starts[i] ?? 0));
      expect(gaps(motion.starts)).toEqual([...STILL_RETRY_DELAYS_MS]);

      const restored = failing();
      const later = new SnapshotCache(restored.fetch, () => undefined);
      later.restore('https://img/old.jpg');
      await later.get();
      await vi.advanceTimersByTimeAsync(60_000);
      expect(gaps(restored.starts)).toEqual([...STILL_RETRY_DELAYS_MS]);
    } finally {
      vi.useRealTimers();
    }
  });
});
