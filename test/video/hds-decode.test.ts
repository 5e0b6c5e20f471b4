// The test hub's Data Stream decoder: a recording fragment's last chunk can be 32 bytes or fewer,
// which hap-nodejs's own decoder drops; the hub must read every chunk as the bytes that were sent.
import { DataStreamParser, DataStreamWriter } from '@homebridge/hap-nodejs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { decodeHdsValue } from '../harness/data-stream.js';

function encode(value: unknown): Buffer {
  const writer = new DataStreamWriter();
  DataStreamParser.encode(value, writer);
  return writer.getData();
}

/** A `dataSend.data` event body as the accessory sends it: one chunk of one packet. */
function dataEvent(chunk: Buffer, last: boolean): Record<string, unknown> {
  return { streamId: 1, packets: [{ data: chunk, metadata: { dataType: 'mediaFragment', dataSequenceNumber: 2, dataChunkSequenceNumber: 3, isLastDataChunk: last } }], endOfStream: last };
}

describe('the test hub decodes Data Stream messages', () => {
  it('reads a chunk of 32 bytes or fewer as its bytes, with the metadata around it', () => {
    const short = Buffer.from('the last few bytes of a fragment');
    const decoded = decodeHdsValue(encode(dataEvent(short, true))) as { packets: { data: Buffer }[] };
    expect(Buffer.from(decoded.packets[0]?.data ?? []).toString()).toBe('the last few bytes of a fragment');
    expect(decoded).toMatchObject({ streamId: 1, endOfStream: true, packets: [{ metadata: { dataType: 'mediaFragment', dataSequenceNumber: 2, dataChunkSequenceNumber: 3, isLastDataChunk: true } }] });
  });

  it('reads an empty list, an empty chunk and a list of chunks', () => {
    expect(decodeHdsValue(encode([]))).toEqual([]);
    const decoded = decodeHdsValue(encode([Buffer.alloc(0), Buffer.from([1, 2, 3]), Buffer.alloc(40, 9)])) as Buffer[];
    expect(decoded.map((chunk) => [...chunk])).toEqual([[], [1, 2, 3], Array.from({ length: 40 }, () => 9)]);
  });

  it('a chunk of any size from 0 to 300 bytes comes back as sent', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, last) => {
        const decoded = decodeHdsValue(encode(dataEvent(Buffer.from(bytes), last))) as { packets: { data: Buffer }[]; endOfStream: boolean };
        expect([...(decoded.packets[0]?.data ?? [-1])]).toEqual([...bytes]);
        expect(decoded.endOfStream).toBe(last);
      }),
    );
  });
});
