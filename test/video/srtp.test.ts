// SRTP as RFC 3711 defines it, checked against the RFC's own test vectors (appendix B): the AES-CM
// keystream and the key derivation. That a real ffmpeg decodes what the relay sends is checked by
// the relay's stream test.
import { createDecipheriv, createHmac } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { deriveKey, packetIv, rtpHeaderLength, SrtpSender } from '../../src/video/srtp.js';

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');

describe('RFC 3711 test vectors', () => {
  it('B.2: the AES-CM keystream from the session salt (counter blocks 0000 to 0002)', () => {
    const key = hex('2B7E151628AED2A6ABF7158809CF4F3C');
    const salt = hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD');
    expect(packetIv(salt, 0, 0).toString('hex').toUpperCase()).toBe('F0F1F2F3F4F5F6F7F8F9FAFBFCFD0000');
    // With label 0 the derivation runs the same keystream from the same block.
    expect(deriveKey(key, salt, 0, 48).toString('hex').toUpperCase()).toBe(
      'E03EAD0935C95E80E166B16DD92B4EB4' + 'D23513162B02D0F72A43A2FE4A5F97AB' + '41E95B3BB0A2E8DD477901E4FCA894C0',
    );
  });

  it('B.3: the session encryption key, salt and authentication key from the master key and salt', () => {
    const masterKey = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
    const masterSalt = hex('0EC675AD498AFEEBB6960B3AABE6');
    expect(deriveKey(masterKey, masterSalt, 0, 16).toString('hex').toUpperCase()).toBe('C61E7A93744F39EE10734AFE3FF7A087');
    expect(deriveKey(masterKey, masterSalt, 2, 14).toString('hex').toUpperCase()).toBe('30CBBC08863D8C85D49DB34A9AE1');
    expect(deriveKey(masterKey, masterSalt, 1, 20).toString('hex').toUpperCase()).toBe('CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4');
  });
});

describe('protecting packets', () => {
  const masterKey = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
  const masterSalt = hex('0EC675AD498AFEEBB6960B3AABE6');
  const rtp = (seq: number, payload: Buffer) => {
    const header = Buffer.from([0x80, 99, seq >> 8, seq & 0xff, 0, 0, 0x10, 0, 0x12, 0x34, 0x56, 0x78]);
    return Buffer.concat([header, payload]);
  };

  it('encrypts only the payload with the packet index in the counter, and signs header, payload and rollover counter', () => {
    const payload = Buffer.from('a payload that is longer than one block of AES');
    const packet = rtp(0xfffe, payload);
    const out = new SrtpSender(masterKey, masterSalt).protectRtp(packet, 3);
    expect(out.length).toBe(packet.length + 10);
    expect(out.subarray(0, 12)).toEqual(packet.subarray(0, 12));
    const cipherKey = deriveKey(masterKey, masterSalt, 0, 16);
    const salt = deriveKey(masterKey, masterSalt, 2, 14);
    const decipher = createDecipheriv('aes-128-ctr', cipherKey, packetIv(salt, 0x12345678, 3 * 65536 + 0xfffe));
    expect(Buffer.concat([decipher.update(out.subarray(12, packet.length)), decipher.final()])).toEqual(payload);
    const roc = Buffer.from([0, 0, 0, 3]);
    const expected = createHmac('sha1', deriveKey(masterKey, masterSalt, 1, 20)).update(out.subarray(0, packet.length)).update(roc).digest().subarray(0, 10);
    expect(out.subarray(packet.length)).toEqual(expected);
  });

  it('never uses one keystream twice: the same sequence number after a rollover encrypts differently', () => {
    const sender = new SrtpSender(masterKey, masterSalt);
    const packet = rtp(7, Buffer.alloc(32));
    expect(sender.protectRtp(packet, 0).subarray(12, 44)).not.toEqual(sender.protectRtp(packet, 1).subarray(12, 44));
  });

  it('SRTCP: the first 8 bytes in clear, then the encrypted rest, the E flag with a rising index, and the tag', () => {
    const sender = new SrtpSender(masterKey, masterSalt);
    const report = Buffer.alloc(28);
    report.writeUInt8(0x80, 0);
    report.writeUInt8(200, 1);
    report.writeUInt16BE(6, 2);
    report.writeUInt32BE(0x12345678, 4);
    report.fill(0xab, 8);
    const first = sender.protectRtcp(report);
    const second = sender.protectRtcp(report);
    expect(first.length).toBe(28 + 4 + 10);
    expect(first.subarray(0, 8)).toEqual(report.subarray(0, 8));
    expect(first.readUInt32BE(28)).toBe(0x80000000);
    expect(second.readUInt32BE(28)).toBe(0x80000001);
    const decipher = createDecipheriv('aes-128-ctr', deriveKey(masterKey, masterSalt, 3, 16), packetIv(deriveKey(masterKey, masterSalt, 5, 14), 0x12345678, 0));
    expect(Buffer.concat([decipher.update(first.subarray(8, 28)), decipher.final()])).toEqual(report.subarray(8));
    const expected = createHmac('sha1', deriveKey(masterKey, masterSalt, 4, 20)).update(first.subarray(0, 32)).digest().subarray(0, 10);
    expect(first.subarray(32)).toEqual(expected);
  });

  it('finds the payload after CSRCs and a header extension', () => {
    const packet = Buffer.alloc(40);
    packet[0] = 0x80 | 0x10 | 2;
    packet.writeUInt16BE(2, 12 + 8 + 2);
    expect(rtpHeaderLength(packet)).toBe(12 + 8 + 4 + 8);
  });
});
