// The vanished-viewer watch with fake timers: only RTCP from the viewer's own address counts; a
// silent viewer ends after 5 RTCP intervals (at least 2.5 s) after its first report, or when none
// came within 5 s of the start; one lost report never ends a view; a pause of the process itself
// is not silence.
import type { RemoteInfo } from 'node:dgram';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { FIRST_REPORT_GRACE_MS, MIN_SILENCE_MS, ViewerWatch } from '../../src/video/viewer-watch.js';

const REPORT = Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 1]);
const VIEWER = { address: '192.168.1.20', ipv6: false };
const from = (address: string, family: 'IPv4' | 'IPv6' = 'IPv4'): RemoteInfo => ({ address, family, port: 50_000, size: 8 });
const watches: ViewerWatch[] = [];

function watch(rtcpInterval = 0.5, viewer = VIEWER): { watch: ViewerWatch; gone: ReturnType<typeof vi.fn> } {
  const gone = vi.fn();
  const made = new ViewerWatch(viewer, rtcpInterval, gone, () => Date.now());
  watches.push(made);
  return { watch: made, gone };
}

/** Reports every `everyMs` from `address` for `forMs`. */
function reportFor(target: ViewerWatch, forMs: number, everyMs = 500, address = VIEWER.address, packet = REPORT): void {
  for (let at = 0; at < forMs; at += everyMs) {
    target.heard(packet, from(address));
    vi.advanceTimersByTime(everyMs);
  }
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  for (const made of watches.splice(0)) made.stop();
  vi.useRealTimers();
});

describe('the vanished-viewer watch', () => {
  it('a viewer that reports is kept; silent for 5 intervals (2.5 s at 0.5 s) after its reports: gone once', () => {
    const { watch: made, gone } = watch();
    reportFor(made, 10_000);
    expect(gone).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MIN_SILENCE_MS - 300);
    expect(gone).not.toHaveBeenCalled();
    vi.advanceTimersByTime(600);
    expect(gone).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10_000);
    expect(gone).toHaveBeenCalledTimes(1);
  });

  it('one or two lost reports (1.5 s of silence, the old limit) never end a view', () => {
    const { watch: made, gone } = watch();
    reportFor(made, 3_000);
    vi.advanceTimersByTime(2_000);
    reportFor(made, 3_000);
    expect(gone).not.toHaveBeenCalled();
  });

  it('a longer RTCP interval waits 5 of them (2 s: 10 s); a tiny one still waits 2.5 s', () => {
    const slow = watch(2);
    reportFor(slow.watch, 4_000, 2_000);
    // The last report came 2 s ago: 9 s of silence.
    vi.advanceTimersByTime(7_000);
    expect(slow.gone).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_500);
    expect(slow.gone).toHaveBeenCalledTimes(1);
    const fast = watch(0.1);
    reportFor(fast.watch, 1_000, 100);
    vi.advanceTimersByTime(2_200);
    expect(fast.gone).not.toHaveBeenCalled();
    vi.advanceTimersByTime(600);
    expect(fast.gone).toHaveBeenCalledTimes(1);
  });

  it('no report at all: gone 5 s after the start, not before', () => {
    const { gone } = watch();
    vi.advanceTimersByTime(FIRST_REPORT_GRACE_MS - 300);
    expect(gone).not.toHaveBeenCalled();
    vi.advanceTimersByTime(600);
    expect(gone).toHaveBeenCalledTimes(1);
  });

  it('a stranger\'s datagrams, or anything but RTCP from the viewer, keep no stream alive', () => {
    const { watch: made, gone } = watch();
    made.heard(REPORT, from(VIEWER.address));
    reportFor(made, 2_000, 250, '192.168.1.66');
    // RTP (payload type 99) from the viewer's address is not a report either, nor a short datagram.
    reportFor(made, 1_000, 250, VIEWER.address, Buffer.from([0x80, 99, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]));
    reportFor(made, 500, 250, VIEWER.address, Buffer.from([0x80, 201]));
    expect(gone).toHaveBeenCalledTimes(1);
  });

  it('an IPv6 viewer is heard on IPv6 only; an IPv4 viewer seen through an IPv6 socket is the same address', () => {
    const six = watch(0.5, { address: 'FE80::1', ipv6: true });
    const four = watch(0.5, { address: '10.0.0.5', ipv6: true });
    for (let at = 0; at < 6_000; at += 500) {
      six.watch.heard(REPORT, from('fe80::1', 'IPv6'));
      four.watch.heard(REPORT, from('::ffff:10.0.0.5', 'IPv6'));
      vi.advanceTimersByTime(500);
    }
    expect(six.gone).not.toHaveBeenCalled();
    expect(four.gone).not.toHaveBeenCalled();
    const wrongFamily = watch(0.5, { address: '10.0.0.5', ipv6: false });
    for (let at = 0; at < 6_000; at += 500) {
      wrongFamily.watch.heard(REPORT, from('10.0.0.5', 'IPv6'));
      vi.advanceTimersByTime(500);
    }
    expect(wrongFamily.gone).toHaveBeenCalledTimes(1);
  });

  it('a pause of this process (its clock moved on, no timer ran) is not the viewer\'s silence: the reports that waited meanwhile keep the view', () => {
    const { watch: made, gone } = watch();
    // Paused before the first report too: the 5 s of grace count only time the process listened.
    vi.setSystemTime(Date.now() + FIRST_REPORT_GRACE_MS + 1_000);
    vi.advanceTimersByTime(250);
    expect(gone).not.toHaveBeenCalled();
    reportFor(made, 3_000);
    // A 4 s pause: the first tick after it is late, and only then are the waiting reports read.
    vi.setSystemTime(Date.now() + 4_000);
    vi.advanceTimersByTime(250);
    expect(gone).not.toHaveBeenCalled();
    reportFor(made, 3_000);
    expect(gone).not.toHaveBeenCalled();
  });

  it('a viewer that went away during a pause is gone after the silence it keeps once the process listens again', () => {
    const { watch: made, gone } = watch();
    reportFor(made, 3_000);
    vi.setSystemTime(Date.now() + 4_000);
    vi.advanceTimersByTime(MIN_SILENCE_MS - 1_000);
    expect(gone).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1_000);
    expect(gone).toHaveBeenCalledTimes(1);
  });

  it('stopped: never calls, and leaves no timer', () => {
    const { watch: made, gone } = watch();
    made.stop();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(20_000);
    expect(gone).not.toHaveBeenCalled();
  });
});
