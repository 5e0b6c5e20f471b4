// SRTP and SRTCP protection with AES_CM_128_HMAC_SHA1_80, the one suite HomeKit negotiates: the
// session keys are derived from the controller's master key and salt (AES in counter mode as the
// pseudo-random function, key derivation rate 0), packets are encrypted with AES-128 in counter mode
// and signed with HMAC-SHA1 cut to 80 bits. Used by the relay that forwards a copied clip, because
// ffmpeg's own SRTP output cannot be spliced with a second ffmpeg's into one stream.
import { createCipheriv, createHmac } from 'node:crypto';

/** The authentication tag's length in bytes (80 bits). */
export const SRTP_TAG_LENGTH = 10;
const RTP_LABELS = { cipher: 0, auth: 1, salt: 2 } as const;
const RTCP_LABELS = { cipher: 3, auth: 4, salt: 5 } as const;

/** The keystream of AES-128 in counter mode from `iv` (16 bytes), `length` bytes long. */
function keystream(key: Buffer, iv: Buffer, length: number): Buffer {
  const cipher = createCipheriv('aes-128-ctr', key, iv);
  return Buffer.concat([cipher.update(Buffer.alloc(length)), cipher.final()]);
}

/** One session key: the master key run as AES-CM from the master salt XOR the label (packet index 0). */
export function deriveKey(masterKey: Buffer, masterSalt: Buffer, label: number, length: number): Buffer {
  const iv = Buffer.alloc(16);
  masterSalt.copy(iv, 0, 0, 14);
  // The label sits in the 8th byte from the right of the 112-bit value, which is then shifted by 16 bits.
  iv[7] = (iv[7] ?? 0) ^ label;
  return keystream(masterKey, iv, length);
}

interface Keys {
  cipher: Buffer;
  auth: Buffer;
  salt: Buffer;
}

function sessionKeys(masterKey: Buffer, masterSalt: Buffer, labels: { cipher: number; auth: number; salt: number }): Keys {
  return {
    cipher: deriveKey(masterKey, masterSalt, labels.cipher, 16),
    auth: deriveKey(masterKey, masterSalt, labels.auth, 20),
    salt: deriveKey(masterKey, masterSalt, labels.salt, 14),
  };
}

/** The counter block of a packet: the session salt XOR the SSRC XOR the 48-bit packet index, shifted by 16 bits. */
export function packetIv(salt: Buffer, ssrc: number, index: number): Buffer {
  const iv = Buffer.alloc(16);
  salt.copy(iv, 0, 0, 14);
  iv.writeUInt32BE(((iv.readUInt32BE(4) ^ ssrc) >>> 0), 4);
  const high = Math.floor(index / 2 ** 32);
  const low = index >>> 0;
  iv.writeUInt16BE((iv.readUInt16BE(8) ^ high) & 0xffff, 8);
  iv.writeUInt32BE(((iv.readUInt32BE(10) ^ low) >>> 0), 10);
  return iv;
}

function xorInPlace(target: Buffer, from: number, key: Buffer, iv: Buffer): void {
  const stream = keystream(key, iv, target.length - from);
  for (let i = from; i < target.length; i++) target[i] = (target[i] ?? 0) ^ (stream[i - from] ?? 0);
}

function tag(key: Buffer, ...parts: Buffer[]): Buffer {
  const hmac = createHmac('sha1', key);
  for (const part of parts) hmac.update(part);
  return hmac.digest().subarray(0, SRTP_TAG_LENGTH);
}

/** Where an RTP packet's payload begins (after the fixed header, the CSRCs and any extension). */
export function rtpHeaderLength(packet: Buffer): number {
  const csrcs = (packet[0] ?? 0) & 0x0f;
  let length = 12 + 4 * csrcs;
  if (((packet[0] ?? 0) & 0x10) !== 0 && packet.length >= length + 4) length += 4 + 4 * packet.readUInt16BE(length + 2);
  return Math.min(length, packet.length);
}

/** The sending side of one SRTP session (one master key and salt, one SSRC). */
export class SrtpSender {
  private readonly rtp: Keys;
  private readonly rtcp: Keys;
  private rtcpIndex = 0;

  constructor(masterKey: Buffer, masterSalt: Buffer) {
    this.rtp = sessionKeys(masterKey, masterSalt, RTP_LABELS);
    this.rtcp = sessionKeys(masterKey, masterSalt, RTCP_LABELS);
  }

  /**
   * An RTP packet as SRTP: its payload encrypted, the tag appended. `rollover` counts how often the
   * 16-bit sequence number has wrapped; the caller keeps it (a new packet, a new index: no keystream
   * is ever used twice).
   */
  protectRtp(packet: Buffer, rollover: number): Buffer {
    const out = Buffer.alloc(packet.length + SRTP_TAG_LENGTH);
    packet.copy(out);
    const ssrc = packet.readUInt32BE(8);
    const index = rollover * 0x10000 + packet.readUInt16BE(2);
    const body = out.subarray(0, packet.length);
    xorInPlace(body, rtpHeaderLength(packet), this.rtp.cipher, packetIv(this.rtp.salt, ssrc, index));
    const roc = Buffer.alloc(4);
    roc.writeUInt32BE(rollover >>> 0);
    tag(this.rtp.auth, body, roc).copy(out, packet.length);
    return out;
  }

  /** An RTCP packet (a compound beginning with a sender report) as SRTCP: encrypted after its first 8 bytes, with its index and tag. */
  protectRtcp(packet: Buffer): Buffer {
    const index = this.rtcpIndex;
    this.rtcpIndex = (this.rtcpIndex + 1) % 0x80000000;
    const body = Buffer.from(packet);
    const ssrc = packet.readUInt32BE(4);
    xorInPlace(body, 8, this.rtcp.cipher, packetIv(this.rtcp.salt, ssrc, index));
    const trailer = Buffer.alloc(4);
    // The E flag (encrypted) and the 31-bit SRTCP index.
    trailer.writeUInt32BE((0x80000000 | index) >>> 0);
    return Buffer.concat([body, trailer, tag(this.rtcp.auth, body, trailer)]);
  }
}
