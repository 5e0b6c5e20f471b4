// The home hub's side of a HomeKit Data Stream, enough to download a Secure Video recording the way
// a hub does: write SetupDataStreamTransport over HAP (a write with response), derive the stream keys
// from the shared secret of that HAP session's pair-verify, connect over TCP, say `control.hello`,
// `dataSend.open` an `ipcamera.recording` stream, collect the `dataSend.data` chunks into packets,
// then `dataSend.ack` the end (or `dataSend.close` early). hap-nodejs has only the accessory side;
// its OPACK-style parser (DataStreamParser) encodes and decodes the messages here.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

import { DataStreamParser, DataStreamReader, DataStreamWriter, Int64 } from '@homebridge/hap-nodejs';
import { HttpClient } from 'hap-controller';

import type { BridgeAddress } from './hap.js';

/** HKDF info strings of the two directions (the salt is the controller's salt then the accessory's). */
const ACCESSORY_TO_CONTROLLER_INFO = 'HDS-Read-Encryption-Key';
const CONTROLLER_TO_ACCESSORY_INFO = 'HDS-Write-Encryption-Key';

export interface HdsMessage {
  protocol: string;
  topic: string;
  kind: 'event' | 'request' | 'response';
  id?: number;
  status?: number;
  body: Record<string, unknown>;
}

/** One recording packet, its chunks joined: the initialization segment first, then fragments. */
export interface RecordingPacket {
  dataType: string;
  sequence: number;
  data: Buffer;
  /** Whether the accessory marked this the last packet (endOfStream). */
  last: boolean;
  /** Milliseconds from the `dataSend.open` request to this packet's first chunk. */
  atMs: number;
}

/** How a recording download ended: the accessory's end of stream, its close (with reason), or the connection. */
export type RecordingEnd = { how: 'endOfStream' } | { how: 'closed'; reason: number | undefined } | { how: 'disconnected' };

function tlv(entries: [number, Buffer][]): Buffer {
  return Buffer.concat(entries.map(([type, value]) => Buffer.concat([Buffer.from([type, value.length]), value])));
}

function parseTlv(data: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  for (let offset = 0; offset + 2 <= data.length; ) {
    const type = data[offset] as number;
    const length = data[offset + 1] as number;
    out.set(type, Buffer.concat([out.get(type) ?? Buffer.alloc(0), data.subarray(offset + 2, offset + 2 + length)]));
    offset += 2 + length;
  }
  return out;
}

function nonce(counter: bigint): Buffer {
  const buffer = Buffer.alloc(12);
  buffer.writeBigUInt64LE(counter, 4);
  return buffer;
}

/** Tags of the message format that the decoder below handles itself. */
const TERMINATOR_TAG = 0x03;
const SHORT_DATA_FIRST = 0x70; // data of 0 to 32 bytes, the length in the tag
const SHORT_DATA_LAST = 0x90;
const ARRAY_FIRST = 0xd0; // arrays of 0 to 14 elements
const ARRAY_LAST = 0xde;
const ARRAY_TERMINATED = 0xdf;
const DICTIONARY_FIRST = 0xe0; // dictionaries of 0 to 14 entries
const DICTIONARY_LAST = 0xee;
const DICTIONARY_TERMINATED = 0xef;

/**
 * Decodes one value. hap-nodejs's decoder reads data of 32 bytes or fewer but returns nothing for it
 * (it only ever decodes what a hub sends, which never is such data); a recording's last chunk of a
 * fragment can be that short, so short data and the containers that may hold it are read here and
 * everything else is left to hap-nodejs.
 */
export function decodeHdsValue(bytes: Buffer, reader: DataStreamReader = new DataStreamReader(bytes)): unknown {
  const tag = bytes[reader.readerIndex];
  if (tag === undefined) return DataStreamParser.decode(reader); // its own end-of-data error
  if (tag >= SHORT_DATA_FIRST && tag <= SHORT_DATA_LAST) {
    reader.readerIndex++;
    return reader.readData(tag - SHORT_DATA_FIRST);
  }
  const terminated = tag === ARRAY_TERMINATED || tag === DICTIONARY_TERMINATED;
  const isArray = tag === ARRAY_TERMINATED || (tag >= ARRAY_FIRST && tag <= ARRAY_LAST);
  const isDictionary = tag === DICTIONARY_TERMINATED || (tag >= DICTIONARY_FIRST && tag <= DICTIONARY_LAST);
  if (!isArray && !isDictionary) return DataStreamParser.decode(reader);
  reader.readerIndex++;
  const count = terminated ? Infinity : tag - (isArray ? ARRAY_FIRST : DICTIONARY_FIRST);
  const items: unknown[] = [];
  const entries: [string, unknown][] = [];
  for (let i = 0; i < count; i++) {
    if (terminated && bytes[reader.readerIndex] === TERMINATOR_TAG) {
      reader.readerIndex++;
      break;
    }
    if (isArray) items.push(decodeHdsValue(bytes, reader));
    else entries.push([String(decodeHdsValue(bytes, reader)), decodeHdsValue(bytes, reader)]);
  }
  return isArray ? items : Object.fromEntries(entries);
}

function plain(value: unknown): unknown {
  if (value instanceof Int64) return value.value;
  if (Buffer.isBuffer(value)) return value;
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/** A Data Stream connection set up through one HAP session, as a home hub makes it. */
export class DataStreamClient {
  private readKey = Buffer.alloc(0);
  private writeKey = Buffer.alloc(0);
  private readCounter = 0n;
  private writeCounter = 0n;
  private buffered = Buffer.alloc(0);
  private nextId = 1;
  private readonly listeners = new Set<(message: HdsMessage) => void>();
  private closedHandlers = new Set<() => void>();
  private socket: Socket | undefined;
  /** Every message received, in order. */
  readonly received: HdsMessage[] = [];
  closed = false;

  private constructor(private readonly hap: HttpClient) {}

  /**
   * Sets up the transport on the camera's DataStreamTransportManagement (`setupId` is the
   * SetupDataStreamTransport characteristic as "aid.iid"), connects and says hello.
   */
  static async open(bridge: BridgeAddress, pairing: ReturnType<HttpClient['getLongTermData']>, setupId: string): Promise<DataStreamClient> {
    if (!pairing) throw new Error('not paired');
    const host = bridge.host ?? '127.0.0.1';
    // Its own persistent HAP session: the stream keys come from this session's pair-verify secret.
    const hap = new HttpClient(bridge.username, host, bridge.port, pairing, { usePersistentConnections: true });
    const client = new DataStreamClient(hap);
    try {
      await client.setUp(host, setupId);
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  private async setUp(host: string, setupId: string): Promise<void> {
    const controllerSalt = randomBytes(32);
    const request = tlv([
      [1, Buffer.from([0])], // start a session
      [2, Buffer.from([0])], // HomeKit Data Stream over TCP
      [3, controllerSalt],
    ]).toString('base64');
    const response = (await this.hap.setCharacteristics({ [setupId]: { value: request, r: true } })) as { characteristics?: { value?: unknown; status?: number }[] };
    const answer = response.characteristics?.[0];
    if (typeof answer?.value !== 'string') throw new Error(`SetupDataStreamTransport gave no answer (status ${answer?.status ?? 'none'})`);
    const fields = parseTlv(Buffer.from(answer.value, 'base64'));
    if (fields.get(1)?.[0] !== 0) throw new Error(`SetupDataStreamTransport refused (status ${fields.get(1)?.[0]})`);
    const port = parseTlv(fields.get(2) ?? Buffer.alloc(0)).get(1)?.readUInt16LE(0);
    const accessorySalt = fields.get(3);
    if (port === undefined || accessorySalt?.length !== 32) throw new Error('SetupDataStreamTransport answered without a port or key salt');
    const secret = (this.hap as unknown as { pairingProtocol: { pairVerify: { sharedSecret: Buffer | null } } }).pairingProtocol.pairVerify.sharedSecret;
    if (!secret) throw new Error('the HAP session has no pair-verify secret');
    const salt = Buffer.concat([controllerSalt, accessorySalt]);
    this.readKey = Buffer.from(hkdfSync('sha512', secret, salt, ACCESSORY_TO_CONTROLLER_INFO, 32));
    this.writeKey = Buffer.from(hkdfSync('sha512', secret, salt, CONTROLLER_TO_ACCESSORY_INFO, 32));
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, host, () => {
        socket.off('error', reject);
        resolve();
      });
      socket.once('error', reject);
      this.socket = socket;
    });
    const socket = this.socket as Socket;
    socket.on('data', (data: Buffer) => {
      this.onData(data);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.closed = true;
      for (const handler of this.closedHandlers) handler();
    });
    const hello = await this.request('control', 'hello', {});
    if (hello.status !== 0) throw new Error(`control.hello answered status ${hello.status}`);
  }

  /** Sends a request and resolves with its response. */
  async request(protocol: string, topic: string, body: Record<string, unknown>, timeoutMs = 10_000): Promise<HdsMessage> {
    const id = this.nextId++;
    const answer = this.next((m) => m.kind === 'response' && m.protocol === protocol && m.topic === topic && m.id === id, `${protocol}.${topic} response`, timeoutMs);
    this.send({ protocol, request: topic, id: new Int64(id) }, body);
    return answer;
  }

  event(protocol: string, topic: string, body: Record<string, unknown>): void {
    this.send({ protocol, event: topic }, body);
  }

  /** The first message (received from now on) that matches. */
  next(match: (message: HdsMessage) => boolean, what: string, timeoutMs = 10_000): Promise<HdsMessage> {
    return new Promise((resolve, reject) => {
      const listener = (message: HdsMessage): void => {
        if (!match(message)) return;
        finish();
        resolve(message);
      };
      const gone = (): void => {
        finish();
        reject(new Error(`the data stream closed while waiting for ${what}`));
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        this.closedHandlers.delete(gone);
      };
      this.listeners.add(listener);
      this.closedHandlers.add(gone);
    });
  }

  /**
   * Opens a recording stream and collects its packets until the accessory marks the end (then acks
   * it, as a hub does), closes it, or the connection drops. `closeAfter` closes the stream from the
   * hub's side once that many packets have arrived (`beforeClose` runs just before).
   */
  async record(options: { streamId?: number; reason?: string; closeAfter?: number; beforeClose?: () => void; timeoutMs?: number } = {}): Promise<{ open: HdsMessage; packets: RecordingPacket[]; end: RecordingEnd }> {
    const streamId = options.streamId ?? 1;
    const packets: RecordingPacket[] = [];
    const pending = new Map<number, { dataType: string; chunks: Buffer[]; atMs: number }>();
    const started = Date.now();
    let settled = false;
    let resolveEnd: (end: RecordingEnd) => void = () => undefined;
    const ended = new Promise<RecordingEnd>((resolve) => {
      resolveEnd = resolve;
    });
    const settle = (end: RecordingEnd): void => {
      settled = true;
      resolveEnd(end);
    };
    const onMessage = (message: HdsMessage): void => {
      // Frames that arrive after the end (in the same read as the last one) are not this recording's.
      if (settled) return;
      if (message.protocol !== 'dataSend' || message.kind !== 'event' || message.body.streamId !== streamId) return;
      if (message.topic === 'close') {
        settle({ how: 'closed', reason: typeof message.body.reason === 'number' ? message.body.reason : undefined });
        return;
      }
      if (message.topic !== 'data') return;
      for (const packet of (message.body.packets as { data: Buffer; metadata: Record<string, unknown> }[] | undefined) ?? []) {
        const sequence = Number(packet.metadata.dataSequenceNumber);
        const entry = pending.get(sequence) ?? { dataType: String(packet.metadata.dataType), chunks: [], atMs: Date.now() - started };
        entry.chunks.push(packet.data);
        pending.set(sequence, entry);
        if (packet.metadata.isLastDataChunk === true) {
          pending.delete(sequence);
          packets.push({ dataType: entry.dataType, sequence, data: Buffer.concat(entry.chunks), last: message.body.endOfStream === true, atMs: entry.atMs });
          if (options.closeAfter !== undefined && packets.length === options.closeAfter) {
            options.beforeClose?.();
            this.event('dataSend', 'close', { streamId, reason: 0 });
            settle({ how: 'closed', reason: 0 });
            return;
          }
        }
      }
      if (message.body.endOfStream === true) {
        this.event('dataSend', 'ack', { streamId, endOfStream: true });
        settle({ how: 'endOfStream' });
      }
    };
    const onClosed = (): void => {
      settle({ how: 'disconnected' });
    };
    this.listeners.add(onMessage);
    this.closedHandlers.add(onClosed);
    try {
      const open = await this.request('dataSend', 'open', { target: 'controller', type: 'ipcamera.recording', streamId, reason: options.reason ?? 'motion' });
      if (open.status !== 0 || (open.body.status !== undefined && open.body.status !== 0)) return { open, packets, end: { how: 'closed', reason: Number(open.body.status) } };
      const timeoutMs = options.timeoutMs ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => {
          reject(new Error(`the recording did not end within ${timeoutMs} ms (${packets.length} packets)`));
        }, timeoutMs);
      });
      try {
        const end = await Promise.race([ended, timeout]);
        return { open, packets, end };
      } finally {
        clearTimeout(timer);
      }
    } finally {
      this.listeners.delete(onMessage);
      this.closedHandlers.delete(onClosed);
    }
  }

  async close(): Promise<void> {
    this.socket?.destroy();
    await this.hap.close().catch(() => undefined);
  }

  private send(header: Record<string, unknown>, body: Record<string, unknown>): void {
    const socket = this.socket;
    if (!socket) throw new Error('not connected');
    const headerWriter = new DataStreamWriter();
    DataStreamParser.encode(header, headerWriter);
    const bodyWriter = new DataStreamWriter();
    DataStreamParser.encode(body, bodyWriter);
    const payload = Buffer.concat([Buffer.from([headerWriter.length()]), headerWriter.getData(), bodyWriter.getData()]);
    const frameHeader = Buffer.from([1, (payload.length >> 16) & 0xff, (payload.length >> 8) & 0xff, payload.length & 0xff]);
    const cipher = createCipheriv('chacha20-poly1305', this.writeKey, nonce(this.writeCounter++), { authTagLength: 16 });
    cipher.setAAD(frameHeader, { plaintextLength: payload.length });
    const sealed = Buffer.concat([cipher.update(payload), cipher.final()]);
    socket.write(Buffer.concat([frameHeader, sealed, cipher.getAuthTag()]));
  }

  private onData(data: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, data]);
    while (this.buffered.length >= 4) {
      const length = this.buffered.readUIntBE(1, 3);
      if (this.buffered.length < 4 + length + 16) return;
      const frameHeader = this.buffered.subarray(0, 4);
      const sealed = this.buffered.subarray(4, 4 + length);
      const tag = this.buffered.subarray(4 + length, 4 + length + 16);
      this.buffered = this.buffered.subarray(4 + length + 16);
      const decipher = createDecipheriv('chacha20-poly1305', this.readKey, nonce(this.readCounter++), { authTagLength: 16 });
      decipher.setAAD(frameHeader, { plaintextLength: sealed.length });
      decipher.setAuthTag(tag);
      const payload = Buffer.concat([decipher.update(sealed), decipher.final()]);
      const headerLength = payload[0] as number;
      const header = plain(decodeHdsValue(payload.subarray(1, 1 + headerLength))) as Record<string, unknown>;
      const body = plain(decodeHdsValue(payload.subarray(1 + headerLength))) as Record<string, unknown>;
      const message = toMessage(header, body);
      this.received.push(message);
      for (const listener of [...this.listeners]) listener(message);
    }
  }
}

function toMessage(header: Record<string, unknown>, body: Record<string, unknown>): HdsMessage {
  const protocol = String(header.protocol);
  const id = typeof header.id === 'number' ? header.id : undefined;
  if (typeof header.event === 'string') return { protocol, topic: header.event, kind: 'event', body };
  if (typeof header.request === 'string') return { protocol, topic: header.request, kind: 'request', ...(id === undefined ? {} : { id }), body };
  return { protocol, topic: String(header.response), kind: 'response', ...(id === undefined ? {} : { id }), ...(typeof header.status === 'number' ? { status: header.status } : {}), body };
}

/** What a hub selects for recording (the values HAP-NodeJS's recording options offer). */
export interface HubSelection {
  width: number;
  height: number;
  fps: number;
  bitrateKbps: number;
  /** H264Profile: 0 baseline, 1 main, 2 high. */
  profile: number;
  /** H264Level: 0 3.1, 1 3.2, 2 4.0. */
  level: number;
  fragmentMs: number;
  /** AudioRecordingSamplerate: 1 16 kHz, 2 24 kHz, 3 32 kHz. */
  sampleRate: number;
  audioKbps: number;
}

const int32 = (value: number): Buffer => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32LE(value);
  return buffer;
};
const uint16 = (value: number): Buffer => {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16LE(value);
  return buffer;
};

/** SelectedCameraRecordingConfiguration as a hub writes it (base64 TLV), recording on motion. */
export function selectedRecordingConfiguration(selection: HubSelection): string {
  const triggers = Buffer.alloc(8);
  triggers.writeInt32LE(1); // motion
  const recording = tlv([
    [1, int32(4000)], // prebuffer length
    [2, triggers],
    [3, tlv([[1, Buffer.from([0])], [2, tlv([[1, int32(selection.fragmentMs)]])]])], // fragmented MP4
  ]);
  const video = tlv([
    [1, Buffer.from([0])], // H.264
    [2, tlv([[1, Buffer.from([selection.profile])], [2, Buffer.from([selection.level])], [3, int32(selection.bitrateKbps)], [4, int32(selection.fragmentMs)]])],
    [3, tlv([[1, uint16(selection.width)], [2, uint16(selection.height)], [3, Buffer.from([selection.fps])]])],
  ]);
  const maxBitrate = Buffer.alloc(4);
  maxBitrate.writeUInt32LE(selection.audioKbps);
  const audio = tlv([
    [1, Buffer.from([0])], // AAC-LC
    [2, tlv([[1, Buffer.from([1])], [2, Buffer.from([0])], [3, Buffer.from([selection.sampleRate])], [4, maxBitrate]])],
  ]);
  return tlv([[1, recording], [2, video], [3, audio]]).toString('base64');
}
