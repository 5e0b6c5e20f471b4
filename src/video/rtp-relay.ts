// The relay between ffmpeg and the viewer for a copied clip: ffmpeg sends plain RTP to a local port
// of ours, and the relay forwards each packet at once as SRTP with the controller's key. It is what
// lets two ffmpeg runs (the clip copied as it is, then its last frame held) reach the viewer as one
// stream: one SSRC, sequence numbers that go on across the splice (the rollover counter counted, so
// no keystream is used twice), timestamps that go on with the clock. It also sends the viewer a
// sender report every second, protected as SRTCP. Nothing is buffered beyond the packet in hand.
// The sound goes through a relay of its own, which drops its packets while the viewer has muted it.
// It takes packets only from the local port it told the ffmpeg to send from: any program on the
// machine can send to a loopback port, and none may slip its own pictures into the viewer's stream.
import { randomInt } from 'node:crypto';
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

import { rtpHeaderLength, SrtpSender } from './srtp.js';

/** Where the viewer wants the stream and how (from its SetupEndpoints and its selection). */
export interface RelayTarget {
  address: string;
  port: number;
  srtpKey: Buffer;
  srtpSalt: Buffer;
  ssrc: number;
  payloadType: number;
  /** Hz of the RTP clock (90 kHz for video). */
  clockRate: number;
}

/** Where an ffmpeg sends to the relay: the relay's port, and the local ports it must send its RTP and RTCP from. */
export interface RelaySink {
  port: number;
  from: number;
  rtcpFrom: number;
}

const REPORT_EVERY_MS = 1_000;
/** Seconds from 1900 (NTP's epoch) to 1970. */
const NTP_OFFSET = 2_208_988_800;
const RTCP_SENDER_REPORT = 200;

interface Leg {
  lastInSeq: number | undefined;
  tsOffset: number;
}

export class RtpRelay {
  private readonly srtp: SrtpSender;
  private leg: Leg = { lastInSeq: undefined, tsOffset: 0 };
  /** The extended (48-bit) sequence number of the last packet sent; -1 before the first. */
  private outIndex: number;
  private lastOutTs: number;
  private lastSentAt = 0;
  private sent = 0;
  private octets = 0;
  private reports: NodeJS.Timeout | undefined;
  private closed = false;
  /** The local port the current ffmpeg sends its RTP from; nothing else is taken. */
  private sender: number | undefined;
  /** While true, packets are dropped (the viewer muted the camera's microphone). */
  muted = false;

  private constructor(
    private readonly input: Socket,
    private readonly output: Socket,
    private readonly target: RelayTarget,
    private readonly now: () => number,
    firstSequence: number,
  ) {
    this.srtp = new SrtpSender(target.srtpKey, target.srtpSalt);
    this.outIndex = firstSequence - 1;
    this.lastOutTs = randomInt(0, 2 ** 31);
    input.on('message', (packet, from) => {
      if (this.fromSender(from)) this.forward(packet);
    });
    input.on('error', () => undefined);
  }

  /**
   * Opens the local port ffmpeg sends to; `output` is the socket the viewer's reports arrive on, the
   * stream leaves from it. `firstSequence` (random by default) lets a test start near the wrap.
   */
  static async open(output: Socket, target: RelayTarget, options: { now?: () => number; firstSequence?: number } = {}): Promise<RtpRelay> {
    const input = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      input.once('error', reject);
      input.bind(0, '127.0.0.1', () => {
        input.off('error', reject);
        resolve();
      });
    });
    // Random starting points, as RTP asks of a new stream.
    return new RtpRelay(input, output, target, options.now ?? Date.now, options.firstSequence ?? randomInt(0, 0x8000));
  }

  /**
   * The ports for the next ffmpeg: free local ports for it to send from (ffmpeg's `localrtpport`
   * and `localrtcpport`), and from then on only packets from the first are taken. A program that
   * took the port first makes ffmpeg fail to start: the view ends, nothing foreign is shown.
   */
  async nextSender(): Promise<RelaySink> {
    const [from, rtcpFrom] = await freeLoopbackPorts(2);
    if (from === undefined || rtcpFrom === undefined) throw new Error('no free local port for ffmpeg');
    this.sender = from;
    return { port: this.input.address().port, from, rtcpFrom };
  }

  /** Packets sent to the viewer so far. */
  get packets(): number {
    return this.sent;
  }

  /** The next packet comes from a new ffmpeg: its numbering starts over, the stream's does not. */
  splice(): void {
    this.leg = { lastInSeq: undefined, tsOffset: 0 };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.reports);
    try {
      this.input.close();
    } catch {
      // Already closed.
    }
  }

  private fromSender(from: RemoteInfo): boolean {
    return from.address === '127.0.0.1' && from.port === this.sender;
  }

  private forward(packet: Buffer): void {
    if (this.closed || packet.length < 12 || ((packet[0] ?? 0) & 0xc0) !== 0x80) return;
    // ffmpeg's own reports describe its numbering, not the stream's: the relay sends its own.
    const type = packet[1] ?? 0;
    if (type >= 192 && type <= 223) return;
    const seq = packet.readUInt16BE(2);
    const ts = packet.readUInt32BE(4);
    const now = this.now();
    const { leg } = this;
    if (leg.lastInSeq === undefined) {
      // The first packet of an ffmpeg: it follows the last one sent as the clock has moved since.
      const expected = this.sent === 0 ? this.lastOutTs : this.lastOutTs + Math.round(((now - this.lastSentAt) * this.target.clockRate) / 1000);
      leg.tsOffset = expected - ts;
    } else {
      const step = (seq - leg.lastInSeq) & 0xffff;
      // A repeated or late packet (never on the loopback, but never sent twice with one index).
      if (step === 0 || step >= 0x8000) return;
    }
    leg.lastInSeq = seq;
    // Muted: the packet is dropped; the numbering goes on from the last one sent, the clock moves on.
    if (this.muted) return;
    this.outIndex += 1;
    const out = Buffer.from(packet);
    out[1] = (type & 0x80) | (this.target.payloadType & 0x7f);
    out.writeUInt16BE(this.outIndex & 0xffff, 2);
    this.lastOutTs = (ts + leg.tsOffset) >>> 0;
    out.writeUInt32BE(this.lastOutTs, 4);
    out.writeUInt32BE(this.target.ssrc >>> 0, 8);
    this.send(this.srtp.protectRtp(out, Math.floor(this.outIndex / 0x10000)));
    this.lastSentAt = now;
    this.sent++;
    this.octets += packet.length - rtpHeaderLength(packet);
    if (this.reports === undefined) {
      this.reports = setInterval(() => {
        this.report();
      }, REPORT_EVERY_MS);
      this.reports.unref();
    }
  }

  /** A sender report: the wall clock against the stream's clock, and what was sent so far. */
  private report(): void {
    if (this.closed) return;
    const now = this.now();
    const report = Buffer.alloc(28);
    report.writeUInt8(0x80, 0);
    report.writeUInt8(RTCP_SENDER_REPORT, 1);
    report.writeUInt16BE(6, 2);
    report.writeUInt32BE(this.target.ssrc >>> 0, 4);
    const seconds = Math.floor(now / 1000);
    report.writeUInt32BE((seconds + NTP_OFFSET) >>> 0, 8);
    report.writeUInt32BE(Math.floor(((now % 1000) / 1000) * 2 ** 32) >>> 0, 12);
    report.writeUInt32BE((this.lastOutTs + Math.round(((now - this.lastSentAt) * this.target.clockRate) / 1000)) >>> 0, 16);
    report.writeUInt32BE(this.sent >>> 0, 20);
    report.writeUInt32BE(this.octets >>> 0, 24);
    this.send(this.srtp.protectRtcp(report));
  }

  private send(packet: Buffer): void {
    try {
      this.output.send(packet, this.target.port, this.target.address);
    } catch {
      // The stream's socket closed as it ended: nothing more to send.
    }
  }
}

/** `count` distinct UDP ports free on the loopback right now (bound at once, then let go). */
async function freeLoopbackPorts(count: number): Promise<number[]> {
  const sockets = Array.from({ length: count }, () => createSocket('udp4'));
  try {
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve, reject) => {
            socket.once('error', reject);
            socket.bind(0, '127.0.0.1', () => {
              resolve();
            });
          }),
      ),
    );
    return sockets.map((socket) => socket.address().port);
  } finally {
    for (const socket of sockets) {
      try {
        socket.close();
      } catch {
        // Never bound.
      }
    }
  }
}
