// The shutdown runs its steps in a fixed order whatever the order parts were built in, waits for
// the inbound ways to close (and one turn more) before the devices let go, and stops at once a
// part built after it began.
import { describe, expect, it } from 'vitest';

import { Shutdown } from '../../src/util/shutdown.js';

describe('the shutdown steps', () => {
  it('halt, close (awaited, then one more turn), release, flush: in that order whatever the order of building', async () => {
    const shutdown = new Shutdown();
    const seen: string[] = [];
    shutdown.on('flush', () => seen.push('flush'));
    shutdown.on('release', () => seen.push('release'));
    shutdown.on('close', async () => {
      await new Promise((resolve) => setImmediate(resolve));
      seen.push('closed');
      // What the closed listener delivered just before runs on a later turn, before the release.
      setImmediate(() => seen.push('delivered'));
    });
    shutdown.on('halt', () => seen.push('halt'));
    await shutdown.run();
    expect(seen).toEqual(['halt', 'closed', 'delivered', 'release', 'flush']);
  });

  it('waits for what halt and flush return; a failing stop costs the others nothing', async () => {
    const shutdown = new Shutdown();
    let tunnelClosed = false;
    let flushed = false;
    shutdown.on('halt', () => new Promise<void>((resolve) => setTimeout(() => {
      tunnelClosed = true;
      resolve();
    }, 5)));
    shutdown.on('halt', () => {
      throw new Error('a timer that was never set');
    });
    shutdown.on('flush', () => Promise.reject(new Error('disk full')));
    shutdown.on('flush', async () => {
      await Promise.resolve();
      flushed = true;
    });
    await shutdown.run();
    expect(tunnelClosed).toBe(true);
    expect(flushed).toBe(true);
  });

  it('a part built after the shutdown began stops at once; a second run is the first', async () => {
    const shutdown = new Shutdown();
    expect(shutdown.stopping).toBe(false);
    const first = shutdown.run();
    expect(shutdown.stopping).toBe(true);
    expect(shutdown.run()).toBe(first);
    let stopped = false;
    shutdown.on('close', () => {
      stopped = true;
    });
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(true);
  });
});
