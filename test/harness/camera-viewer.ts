// A camera viewer as Apple Home is one: over HAP it writes SetupEndpoints (its address, its video
// port, SRTP keys) and reads the accessory's answer, then writes SelectedRTPStreamConfiguration
// (start, with size, rate, bitrate, payload type, MTU); it receives the SRTP on a local UDP port,
// notes when the first packet came, hands every packet to a real ffmpeg that decrypts and decodes
// it (frames counted, and the frames that visibly differ from the one before: ffmpeg's mpdecimate
// tells a held picture, re-encoded with fresh noise, from a moving one), and sends a report to the accessory's port every
// half second the way a phone sends RTCP (stop that to play a viewer that vanished). Sound arrives on
// a port of its own and is decrypted and decoded by a second ffmpeg (Opus, audio frames counted).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { TLV } from 'hap-controller';

import type { HapAccessoryInfo, HapController } from './hap.js';
import { until } from './until.js';

const STREAM_MANAGEMENT = '110';
const SETUP_ENDPOINTS = '118';
const SELECTED_CONFIGURATION = '117';

export interface StreamIds {
  setupEndpoints: string;
  selectedConfiguration: string;
}

/** The `aid.iid` of SetupEndpoints and SelectedRTPStreamConfiguration of each stream-management service. */
export function streamServices(accessory: HapAccessoryInfo): StreamIds[] {
  return accessory.services
    .filter((service) => service.type === STREAM_MANAGEMENT)
    .map((service) => {
      const id = (type: string) => {
        const found = service.characteristics.find((c) => c.type === type);
        if (!found) throw new Error(`stream management without ${type}`);
        return `${found.aid}.${found.iid}`;
      };
      return { setupEndpoints: id(SETUP_ENDPOINTS), selectedConfiguration: id(SELECTED_CONFIGURATION) };
    });
}

const tlv = (entries: [number, Buffer][]): Buffer => TLV.encodeObject(new Map(entries));
const u8 = (value: number) => Buffer.from([value]);
const u16 = (value: number) => {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16LE(value);
  return buffer;
};
const u32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value);
  return buffer;
};
const f32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeFloatLE(value);
  return buffer;
};

export interface ViewerOptions {
  width?: number;
  height?: number;
  fps?: number;
  /** kbit/s */
  bitrate?: number;
  mtu?: number;
  /** H.264 profile as HAP numbers it: 0 baseline, 1 main (the default), 2 high. */
  profile?: number;
  ffmpeg: string;
}

export interface Frames {
  count: number;
  /** Frames that visibly differ from the one before (the first counts): about 1 for a held still, many for a moving recording. */
  changes: number;
  width?: number;
  height?: number;
}

/** One viewer of one stream-management service. */
export class CameraViewer {
  /** When the start was written (ms) and when the first video packet arrived (undefined until then). */
  startedAt = 0;
  firstPacketAt: number | undefined;
  packets = 0;
  /** The accessory's answer to SetupEndpoints: 0 success, 1 busy, 2 error; undefined when the write failed. */
  setupStatus: number | undefined;
  private reporting: NodeJS.Timeout | undefined;
  private readonly lines: string[] = [];
  private returnPort = 0;
  /** Sound packets that arrived (RTP on the audio port). */
  audioPackets = 0;
  private readonly audioLines: string[] = [];

  private constructor(
    private readonly controller: HapController,
    private readonly ids: StreamIds,
    private readonly socket: Socket,
    private readonly decoder: ChildProcess,
    private readonly decoderPort: number,
    private readonly session: Buffer,
    private readonly audioSocket: Socket,
    private readonly audioDecoder: ChildProcess,
    audioDecoderPort: number,
  ) {
    let partial = '';
    decoder.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      // A line may come in two chunks: only whole lines count.
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      this.lines.push(...lines.filter((line) => line.includes(' n:')));
    });
    audioDecoder.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.audioLines.push(...chunk.split('\n').filter((line) => line.includes('Parsed_ashowinfo_0 ') && line.includes(' n:')));
    });
    audioSocket.on('message', (packet) => {
      const payloadType = (packet[1] ?? 0) & 0x7f;
      if (payloadType < 72 || payloadType > 76) this.audioPackets++;
      audioSocket.send(packet, audioDecoderPort, '127.0.0.1');
    });
    socket.on('message', (packet) => {
      // RTP and RTCP share the port; only RTP (payload types below 72 after masking) counts as video.
      const payloadType = (packet[1] ?? 0) & 0x7f;
      if (payloadType < 72 || payloadType > 76) {
        this.packets++;
        this.firstPacketAt ??= Date.now();
      }
      socket.send(packet, this.decoderPort, '127.0.0.1');
    });
  }

  /** Sets up the endpoints (the accessory answers its port and SSRC); the stream is not started yet. */
  static async setUp(controller: HapController, ids: StreamIds, options: ViewerOptions): Promise<CameraViewer> {
    const key = randomBytes(16);
    const salt = randomBytes(14);
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const port = socket.address().port;
    // ffmpeg decodes what the socket hands on: SRTP described by an SDP file with the keys.
    const decoderPort = await freeUdpPort();
    const dir = await mkdtemp(join(tmpdir(), 'la-viewer-'));
    const sdp = join(dir, 'in.sdp');
    await writeFile(sdp, ['v=0', 'o=- 0 0 IN IP4 127.0.0.1', 's=viewer', 'c=IN IP4 127.0.0.1', 't=0 0', `m=video ${decoderPort} RTP/AVP 99`, 'a=rtpmap:99 H264/90000', 'a=fmtp:99 packetization-mode=1', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.concat([key, salt]).toString('base64')}`, ''].join('\n'));
    const decoder = spawn(options.ffmpeg, ['-hide_banner', '-nostdin', '-loglevel', 'info', '-protocol_whitelist', 'file,udp,rtp,srtp', '-i', sdp, '-filter_complex', '[0:v]showinfo,split[all][moving];[moving]mpdecimate,showinfo[changes]', '-map', '[all]', '-f', 'null', '-', '-map', '[changes]', '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
    // The sound: its own port, keys and decoder (Opus, whose RTP clock is always 48 kHz).
    const audioKey = randomBytes(16);
    const audioSalt = randomBytes(14);
    const audioSocket = createSocket('udp4');
    await new Promise<void>((resolve) => audioSocket.bind(0, '127.0.0.1', resolve));
    const audioPort = audioSocket.address().port;
    const audioDecoderPort = await freeUdpPort();
    const audioSdp = join(dir, 'audio.sdp');
    await writeFile(audioSdp, ['v=0', 'o=- 0 0 IN IP4 127.0.0.1', 's=viewer', 'c=IN IP4 127.0.0.1', 't=0 0', `m=audio ${audioDecoderPort} RTP/AVP 110`, 'a=rtpmap:110 opus/48000/2', `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.concat([audioKey, audioSalt]).toString('base64')}`, ''].join('\n'));
    const audioDecoder = spawn(options.ffmpeg, ['-hide_banner', '-nostdin', '-loglevel', 'info', '-protocol_whitelist', 'file,udp,rtp,srtp', '-i', audioSdp, '-af', 'ashowinfo', '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
    // Both decoders listen before the stream starts: a first packet sent to a port not yet bound
    // is lost, and with it the picture's first key frame.
    await until(() => udpBound(decoderPort) && udpBound(audioDecoderPort), 'the viewer\'s decoders listening');
    const session = randomBytes(16);
    const viewer = new CameraViewer(controller, ids, socket, decoder, decoderPort, session, audioSocket, audioDecoder, audioDecoderPort);
    const address = tlv([[1, u8(0)], [2, Buffer.from('127.0.0.1')], [3, u16(port)], [4, u16(audioPort)]]);
    const srtp = (k: Buffer, s: Buffer) => tlv([[1, u8(0)], [2, k], [3, s]]);
    const write = await controller.write(ids.setupEndpoints, tlv([[1, session], [3, address], [4, srtp(key, salt)], [5, srtp(audioKey, audioSalt)]]).toString('base64'));
    if (write !== 0) return viewer;
    const read = await controller.readOne(ids.setupEndpoints);
    const answer = TLV.decodeBuffer(Buffer.from(String(read.value), 'base64'));
    viewer.setupStatus = answer.get(2)?.readUInt8(0);
    const accessoryAddress = answer.get(3);
    if (accessoryAddress) viewer.returnPort = TLV.decodeBuffer(accessoryAddress).get(3)?.readUInt16LE(0) ?? 0;
    return viewer;
  }

  /** Writes the start; resolves with the HAP status of the write (0: started). Reports begin at once. */
  async start(options: ViewerOptions): Promise<number> {
    const { width = 640, height = 360, fps = 15, bitrate = 300, mtu = 1378, profile = 1 } = options;
    const control = tlv([[1, this.session], [2, u8(1)]]);
    const video = tlv([
      [1, u8(0)],
      [2, tlv([[1, u8(profile)], [2, u8(0)], [3, u8(0)]])],
      [3, tlv([[1, u16(width)], [2, u16(height)], [3, u8(fps)]])],
      [4, tlv([[1, u8(99)], [2, u32(1)], [3, u16(bitrate)], [4, f32(0.5)], [5, u16(mtu)]])],
    ]);
    const audio = tlv([
      [1, u8(3)],
      [2, tlv([[1, u8(1)], [2, u8(0)], [3, u8(2)], [4, u8(20)]])],
      [3, tlv([[1, u8(110)], [2, u32(2)], [3, u16(24)], [4, f32(5)], [6, u8(13)]])],
      [4, u8(0)],
    ]);
    this.startedAt = Date.now();
    this.reporting = setInterval(() => {
      // An RTCP receiver report's first bytes: enough for the accessory to hear the viewer is there.
      if (this.returnPort !== 0) this.socket.send(Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 1]), this.returnPort, '127.0.0.1');
    }, 500);
    return this.controller.write(this.ids.selectedConfiguration, tlv([[1, control], [2, video], [3, audio]]).toString('base64'));
  }

  /** Stops the reports without ending the stream: a viewer that went away. */
  vanish(): void {
    clearInterval(this.reporting);
  }

  /** Writes the end of the session (as Apple Home does when the viewer closes). */
  async end(): Promise<number> {
    this.vanish();
    return this.controller.write(this.ids.selectedConfiguration, tlv([[1, tlv([[1, this.session], [2, u8(0)]])]]).toString('base64'));
  }

  /** What the decoder made of it so far. */
  frames(): Frames {
    let width: number | undefined;
    let height: number | undefined;
    let count = 0;
    let changes = 0;
    for (const line of this.lines) {
      // The first showinfo sees every frame, the one after mpdecimate only those that changed.
      if (line.includes('Parsed_showinfo_0 ')) {
        count++;
        const size = /\bs:(\d+)x(\d+)/.exec(line);
        if (size) {
          width = Number(size[1]);
          height = Number(size[2]);
        }
      } else if (/Parsed_showinfo_\d+ /.test(line)) changes++;
    }
    return { count, changes, ...(width === undefined ? {} : { width, height }) };
  }

  /**
   * Seconds of stream from the first decoded frame to the newest (their timestamps): the sender
   * plays in real time, so a test waits for stream time to pass a clip's end rather than sleeping.
   */
  streamSeconds(): number {
    const times = this.lines.flatMap((line) => (line.includes('Parsed_showinfo_0 ') ? /\bpts_time:(-?[\d.]+)/.exec(line)?.[1] ?? [] : []));
    return times.length < 2 ? 0 : Number(times.at(-1)) - Number(times[0]);
  }

  /** The checksum of every decoded frame so far, in order (showinfo's): equal checksums, equal pictures. */
  checksums(): string[] {
    return this.lines.flatMap((line) => (line.includes('Parsed_showinfo_0 ') ? /\bchecksum:([0-9A-F]{8})\b/.exec(line)?.[1] ?? [] : []));
  }

  /** Sound frames the audio decoder made of the sound packets so far. */
  audioFrames(): number {
    return this.audioLines.length;
  }

  /** Packets that arrived after `since` (ms): to tell a stream that ended from one that goes on. */
  packetsSince(): () => number {
    const before = this.packets;
    return () => this.packets - before;
  }

  close(): void {
    this.vanish();
    this.decoder.kill('SIGKILL');
    this.audioDecoder.kill('SIGKILL');
    this.socket.close();
    this.audioSocket.close();
  }
}

/** A free UDP port on 127.0.0.1 for an RTP receiver, even so that port + 1 is free for ffmpeg's RTCP too. */
export async function freeUdpPort(): Promise<number> {
  const probe = createSocket('udp4');
  await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
  const { port } = probe.address();
  await new Promise<void>((resolve) => probe.close(resolve));
  // ffmpeg's RTP input takes port and port + 1: an even port leaves room for both.
  return port % 2 === 0 ? port : port + 1;
}

/** Whether a socket is bound to this UDP port on 127.0.0.1 or any address (Linux: /proc/net/udp). */
export function udpBound(port: number): boolean {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const table = readFileSync('/proc/net/udp', 'utf8');
  return table.split('\n').some((line) => /^\s*\d+: (0100007F|00000000):([0-9A-F]{4}) /.exec(line)?.[2] === hex);
}

/** The pids of the processes whose parent is `pid` (Linux: /proc). */
export function childPids(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}
