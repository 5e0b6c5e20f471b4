// Whether the viewer of a camera-view stream is still there. A phone sends RTCP reports while it
// watches; only those count, and only from the viewer's own address (our return port is bound on
// every interface, and any datagram from anywhere must not keep a stream alive). The viewer is gone
// when no report has come for 5 of its RTCP intervals (at least 2.5 s) after its first, or when none
// came within 5 s of the start: one report lost on a poor network never ends a view. Silence is
// counted only while this process could listen: after a pause of its own (a long garbage
// collection, another plugin's blocking work, a starved machine) the reports that came meanwhile
// wait in the socket and are read only after the timers that are due, so a watch that judged at
// its first late tick would end a viewer that never stopped reporting.
import type { RemoteInfo } from 'node:dgram';

/** Before its first report, a viewer has this long (a phone on a slow network). */
export const FIRST_REPORT_GRACE_MS = 5_000;
/** After its first report, this many RTCP intervals of silence mean the viewer is gone... */
export const SILENT_INTERVALS = 5;
/** ...and never less than this. */
export const MIN_SILENCE_MS = 2_500;
const WATCH_EVERY_MS = 250;
/** A tick this much later than due means the process was paused: that time is not the viewer's silence. */
const PAUSED_AFTER_MS = 250;

/** RTCP packet types (sender and receiver reports, source descriptions, bye, app): 200-204. */
function isRtcp(packet: Buffer): boolean {
  const type = packet[1] ?? 0;
  return packet.length >= 8 && ((packet[0] ?? 0) & 0xc0) === 0x80 && type >= 200 && type <= 204;
}

/** An IPv4 address as an IPv6 socket reports it (::ffff:1.2.3.4) is the same address. */
function plainAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice('::ffff:'.length) : lower;
}

export class ViewerWatch {
  private heardAt: number | undefined;
  private readonly startedAt: number;
  /** When the watch last looked, to see a pause of the process. */
  private lookedAt: number;
  /** How long the process was paused since the last report (or the start): not listened, so not silence. */
  private pausedMs = 0;
  private readonly silenceMs: number;
  private timer: NodeJS.Timeout | undefined;

  /**
   * Starts watching at once; `gone` is called once, when the viewer has fallen silent.
   * `rtcpIntervalSeconds`: the interval the viewer selected (HomeKit's rtcp_interval).
   */
  constructor(
    private readonly viewer: { address: string; ipv6: boolean },
    rtcpIntervalSeconds: number,
    gone: () => void,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    this.lookedAt = this.startedAt;
    const interval = Number.isFinite(rtcpIntervalSeconds) && rtcpIntervalSeconds > 0 ? rtcpIntervalSeconds * 1000 : 0;
    this.silenceMs = Math.max(MIN_SILENCE_MS, SILENT_INTERVALS * interval);
    this.timer = setInterval(() => {
      const at = this.now();
      const late = at - this.lookedAt - WATCH_EVERY_MS;
      this.lookedAt = at;
      if (late > PAUSED_AFTER_MS) this.pausedMs += late;
      if (!this.silent(at)) return;
      this.stop();
      gone();
    }, WATCH_EVERY_MS);
    this.timer.unref();
  }

  /** A datagram on our return port: it counts only when it is RTCP from the viewer's address. */
  heard(packet: Buffer, from: RemoteInfo): void {
    if (from.family !== (this.viewer.ipv6 ? 'IPv6' : 'IPv4')) return;
    if (plainAddress(from.address) !== plainAddress(this.viewer.address) || !isRtcp(packet)) return;
    this.heardAt = this.now();
    this.pausedMs = 0;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private silent(now: number): boolean {
    return this.heardAt === undefined ? now - this.startedAt - this.pausedMs > FIRST_REPORT_GRACE_MS : now - this.heardAt - this.pausedMs > this.silenceMs;
  }
}
