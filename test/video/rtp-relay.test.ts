// The relay's rewriting, packet by packet, on real loopback sockets: plain RTP in from "ffmpeg",
// SRTP out to a "viewer" that decrypts it with the RFC's derivation. One SSRC and payload type;
// sequence numbers that go on across a splice to a second sender (and past 65535, the rollover
// counter counted); timestamps that go on with the clock; nothing sent while muted, the numbering
// unbroken afterwards; sender reports as SRTCP.
import { createDecipheriv } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { RtpRelay, type RelayTarget } from '../../src/video/rtp-relay.js';
import { deriveKey, packetIv } from '../../src/video/srtp.js';

const KEY = Buffer.alloc(16, 7);
const SALT = Buffer.alloc(14, 9);
const open: Socket[] = [];
const relays: RtpRelay[] = [];

async function socket(port = 0): Promise<Socket> {
  const made = createSocket('udp4');
  await new Promise<void>((resolve) => made.bind(port, '127.0.0.1', resolve));
  open.push(made);
  return made;
}

afterEach(() => {
  for (const relay of relays.splice(0)) relay.close();
  for (const made of open.splice(0)) made.close();
});

interface Received {
  seq: number;
  ts: number;
  ssrc: number;
  type: number;
  marker: boolean;
  payload: Buffer;
}

/** Decrypts an SRTP packet the way a viewer does, knowing the rollover counter. */
function decrypt(packet: Buffer, rollover: number): Buffer {
  const cipher = deriveKey(KEY, SALT, 0, 16);
  const salt = deriveKey(KEY, SALT, 2, 14);
  const index = rollover * 65536 + packet.readUInt16BE(2);
  const decipher = createDecipheriv('aes-128-ctr', cipher, packetIv(salt, packet.readUInt32BE(8), index));
  return Buffer.concat([decipher.update(packet.subarray(12, packet.length - 10)), decipher.final()]);
}

function rtp(seq: number, ts: number, payload: string, marker = false): Buffer {
  const header = Buffer.alloc(12);
  header[0] = 0x80;
  header[1] = (marker ? 0x80 : 0) | 96;
  header.writeUInt16BE(seq & 0xffff, 2);
  header.writeUInt32BE(ts >>> 0, 4);
  header.writeUInt32BE(0xdeadbeef, 8);
  return Buffer.concat([header, Buffer.from(payload)]);
}

interface Bed {
  relay: RtpRelay;
  /** Sends from the current "ffmpeg", on the port the relay gave it. */
  send: (packet: Buffer) => void;
  /** A new "ffmpeg" takes over, on the ports the relay gives it now; the old one's socket stays open. */
  newFfmpeg: () => Promise<Socket>;
  next: () => Promise<Buffer>;
  reports: Buffer[];
}

async function setUp(now: () => number, firstSequence?: number): Promise<Bed> {
  const viewer = await socket();
  const output = await socket();
  const queue: Buffer[] = [];
  const waiting: ((packet: Buffer) => void)[] = [];
  const reports: Buffer[] = [];
  viewer.on('message', (packet) => {
    // The sender reports (SRTCP, every second) are kept apart.
    if (packet[1] === 200) {
      reports.push(packet);
      return;
    }
    const wake = waiting.shift();
    if (wake) wake(packet);
    else queue.push(packet);
  });
  const target: RelayTarget = { address: '127.0.0.1', port: viewer.address().port, srtpKey: KEY, srtpSalt: SALT, ssrc: 0x1234abcd, payloadType: 99, clockRate: 90_000 };
  const relay = await RtpRelay.open(output, target, { now, ...(firstSequence === undefined ? {} : { firstSequence }) });
  relays.push(relay);
  let ffmpeg: Socket;
  let relayPort = 0;
  const newFfmpeg = async () => {
    const sink = await relay.nextSender();
    relayPort = sink.port;
    ffmpeg = await socket(sink.from);
    return ffmpeg;
  };
  await newFfmpeg();
  return {
    relay,
    reports,
    newFfmpeg,
    send: (packet) => {
      ffmpeg.send(packet, relayPort, '127.0.0.1');
    },
    next: () => new Promise<Buffer>((resolve) => {
      const ready = queue.shift();
      if (ready) resolve(ready);
      else waiting.push(resolve);
    }),
  };
}

const parse = (packet: Buffer, rollover = 0): Received => ({
  seq: packet.readUInt16BE(2),
  ts: packet.readUInt32BE(4),
  ssrc: packet.readUInt32BE(8),
  type: (packet[1] ?? 0) & 0x7f,
  marker: ((packet[1] ?? 0) & 0x80) !== 0,
  payload: decrypt(packet, rollover),
});

describe('the relay', () => {
  it('one stream across a splice: SSRC and payload type set, numbers continue, the clock continues, payloads intact', async () => {
    let clock = 1_000_000;
    const { relay, send, next, newFfmpeg } = await setUp(() => clock);
    send(rtp(500, 10_000, 'first', false));
    const a = parse(await next());
    send(rtp(501, 13_000, 'second', true));
    const b = parse(await next());
    expect([a.ssrc, b.ssrc]).toEqual([0x1234abcd, 0x1234abcd]);
    expect([a.type, b.type]).toEqual([99, 99]);
    expect(b.marker).toBe(true);
    expect([a.payload.toString(), b.payload.toString()]).toEqual(['first', 'second']);
    expect((b.seq - a.seq) & 0xffff).toBe(1);
    expect((b.ts - a.ts) >>> 0).toBe(3_000);
    // A second ffmpeg, 200 ms later, with numbering of its own.
    clock += 200;
    relay.splice();
    await newFfmpeg();
    send(rtp(7, 555, 'third'));
    const c = parse(await next());
    expect((c.seq - b.seq) & 0xffff).toBe(1);
    expect((c.ts - b.ts) >>> 0).toBe(200 * 90);
    expect(c.payload.toString()).toBe('third');
    expect(relay.packets).toBe(3);
  });

  it('drops a repeated or late packet, so no index is used twice', async () => {
    const { send, next } = await setUp(() => 0);
    send(rtp(10, 0, 'a'));
    const a = parse(await next());
    send(rtp(10, 0, 'again'));
    send(rtp(9, 0, 'late'));
    send(rtp(11, 0, 'b'));
    const b = parse(await next());
    expect(b.payload.toString()).toBe('b');
    expect((b.seq - a.seq) & 0xffff).toBe(1);
  });

  it('past sequence number 65535 the rollover counter is counted in the keystream', async () => {
    const { send, next } = await setUp(() => 0, 65_534);
    const seen: Received[] = [];
    for (let i = 0; i < 4; i += 1) {
      send(rtp(i, i, `p${i}`));
      const packet = await next();
      // A viewer counts a rollover when the sequence number wraps; the third packet is the first after it.
      seen.push(parse(packet, i >= 2 ? 1 : 0));
    }
    expect(seen.map((packet) => packet.seq)).toEqual([65_534, 65_535, 0, 1]);
    expect(seen.map((packet) => packet.payload.toString())).toEqual(['p0', 'p1', 'p2', 'p3']);
    // Read with the wrong counter, the packet after the wrap is noise: the counter is in the keystream.
    send(rtp(4, 4, 'p4'));
    expect(parse(await next(), 0).payload.toString()).not.toBe('p4');
  });

  it('sends a sender report as SRTCP every second: our SSRC, the E flag and index, the tag', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { send, next, reports } = await setUp(() => 0);
    send(rtp(1, 0, 'one'));
    await next();
    vi.advanceTimersByTime(1_000);
    vi.useRealTimers();
    // The report is on its way over the loopback.
    const report = await new Promise<Buffer>((resolve) => {
      const look = () => {
        const [first] = reports;
        if (first) resolve(first);
        else setTimeout(look, 5);
      };
      look();
    });
    expect(report.length).toBe(28 + 4 + 10);
    expect(report.readUInt32BE(4)).toBe(0x1234abcd);
    expect(report.readUInt32BE(28)).toBe(0x80000000);
  });

  it('muted: nothing is sent; unmuted: the numbering goes on without a gap and the clock has moved on', async () => {
    const { relay, send, next } = await setUp(() => 0);
    send(rtp(1, 0, 'before'));
    const a = parse(await next());
    relay.muted = true;
    for (let i = 2; i < 12; i += 1) send(rtp(i, i * 960, 'muted'));
    // They reach the relay while it is muted; the next packet to arrive is the one sent after the unmute.
    await new Promise((resolve) => setTimeout(resolve, 100));
    relay.muted = false;
    send(rtp(12, 12 * 960, 'after'));
    const b = parse(await next());
    expect(b.payload.toString()).toBe('after');
    expect((b.seq - a.seq) & 0xffff).toBe(1);
    expect((b.ts - a.ts) >>> 0).toBe(12 * 960);
  });

  it('takes packets only from the port it gave the current ffmpeg: not from another program, not from the ffmpeg before', async () => {
    const { relay, send, next, newFfmpeg } = await setUp(() => 0);
    const stranger = await socket();
    const relayPort = (await relay.nextSender()).port;
    // nextSender() moved the expected port: take a fresh "ffmpeg" on the newest one.
    const first = await newFfmpeg();
    stranger.send(rtp(1, 0, 'stranger'), relayPort, '127.0.0.1');
    send(rtp(1, 0, 'ffmpeg'));
    expect(parse(await next()).payload.toString()).toBe('ffmpeg');
    relay.splice();
    await newFfmpeg();
    first.send(rtp(2, 0, 'the old ffmpeg'), relayPort, '127.0.0.1');
    stranger.send(rtp(2, 0, 'stranger again'), relayPort, '127.0.0.1');
    send(rtp(50, 0, 'the new ffmpeg'));
    expect(parse(await next()).payload.toString()).toBe('the new ffmpeg');
    expect(relay.packets).toBe(2);
  });
});
