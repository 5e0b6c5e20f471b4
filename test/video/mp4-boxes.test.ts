import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { Mp4BoxReader, Mp4FormatError, Mp4Segmenter } from '../../src/video/mp4-boxes.js';

function box(type: string, payload: Buffer | string = ''): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

function largeBox(type: string, payload: string): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(16);
  header.writeUInt32BE(1, 0);
  header.write(type, 4, 'latin1');
  header.writeBigUInt64BE(BigInt(16 + body.length), 8);
  return Buffer.concat([header, body]);
}

/** The stream cut at the given offsets, as a pipe might deliver it. */
function cut(stream: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set(offsets.map((o) => o % (stream.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...points, stream.length]) {
    chunks.push(stream.subarray(start, point));
    start = point;
  }
  return chunks;
}

const init = [box('ftyp', 'isom'), box('moov', 'movie header')];
const fragment1 = [box('moof', 'first'), box('mdat', 'frames one')];
const fragment2 = [box('moof', 'second'), largeBox('mdat', 'frames two, a 64-bit size')];
const stream = Buffer.concat([...init, box('free'), ...fragment1, box('sidx', 'index'), ...fragment2, box('mfra', 'closing index')]);

describe('fragmented MP4 from a pipe', () => {
  it('reads top-level boxes with 32- and 64-bit sizes, keeping an unfinished box for the next chunk', () => {
    const reader = new Mp4BoxReader();
    const whole = Buffer.concat([box('ftyp', 'isom'), largeBox('mdat', 'abc')]);
    // ftyp is 12 bytes: a cut at 14 completes it and leaves 2 bytes of the next header.
    expect(reader.push(whole.subarray(0, 14)).map((b) => b.type)).toEqual(['ftyp']);
    expect(reader.leftover).toBe(2);
    expect(reader.push(whole.subarray(14, 20))).toEqual([]);
    const rest = reader.push(whole.subarray(20));
    expect(rest.map((b) => [b.type, b.data.length])).toEqual([['mdat', 19]]);
    expect(reader.leftover).toBe(0);
  });

  it('groups ftyp and moov into the initialization segment and each moof with its mdat into a fragment', () => {
    const segmenter = new Mp4Segmenter();
    const segments = segmenter.push(stream);
    expect(segments.map((s) => s.kind)).toEqual(['init', 'fragment', 'fragment']);
    expect(segments[0]?.data).toEqual(Buffer.concat(init));
    expect(segments[1]?.data).toEqual(Buffer.concat(fragment1));
    // sidx before a moof and the closing mfra carry no media for HomeKit.
    expect(segments[2]?.data).toEqual(Buffer.concat(fragment2));
    expect(segmenter.cutShort).toBe(false);
  });

  it('property: however the pipe cuts the stream, the segments are the same', () => {
    const expected = new Mp4Segmenter().push(stream);
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (offsets) => {
        const segmenter = new Mp4Segmenter();
        const got = cut(stream, offsets).flatMap((chunk) => segmenter.push(chunk));
        expect(got).toEqual(expected);
      }),
    );
  });

  it('a stream that stops inside a fragment is reported as cut short, and its partial fragment never comes out', () => {
    const segmenter = new Mp4Segmenter();
    const partial = Buffer.concat([...init, ...fragment1, box('moof', 'third')]);
    expect(segmenter.push(partial).map((s) => s.kind)).toEqual(['init', 'fragment']);
    expect(segmenter.cutShort).toBe(true);
    const inBox = new Mp4Segmenter();
    inBox.push(Buffer.concat(init).subarray(0, 20));
    expect(inBox.cutShort).toBe(true);
  });

  it('refuses sizes that cannot be real: zero (to the end of a file), smaller than the header', () => {
    const zero = Buffer.alloc(8);
    zero.write('mdat', 4, 'latin1');
    expect(() => new Mp4BoxReader().push(zero)).toThrow(Mp4FormatError);
    const tiny = box('free');
    tiny.writeUInt32BE(4, 0);
    expect(() => new Mp4BoxReader().push(tiny)).toThrow(/shorter than its header/);
    const tinyLarge = largeBox('mdat', '');
    tinyLarge.writeBigUInt64BE(8n, 8);
    expect(() => new Mp4BoxReader().push(tinyLarge)).toThrow(/shorter than its header/);
  });
});
