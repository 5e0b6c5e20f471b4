// Fragmented MP4 as it leaves ffmpeg's pipe, cut into what HomeKit Secure Video sends: first the
// initialization segment (ftyp + moov), then one media fragment per moof + mdat pair. Chunks from a
// pipe split boxes anywhere, so the reader keeps the unfinished tail until its box is complete.

/** One top-level box: its four-letter type and all its bytes (header included). */
export interface Mp4Box {
  type: string;
  data: Buffer;
}

/** What a recording sends: the initialization segment once, then fragments. */
export interface Mp4Segment {
  kind: 'init' | 'fragment';
  data: Buffer;
}

/** A box header that cannot be real: a size smaller than its header, or running to the end of a stream. */
export class Mp4FormatError extends Error {}

/**
 * Splits a byte stream into top-level boxes. A box with size 1 carries a 64-bit size after its type;
 * size 0 ("to the end of the file") cannot end in a pipe, so it is refused.
 */
export class Mp4BoxReader {
  private pending: Buffer[] = [];
  private pendingLength = 0;

  /** The boxes completed by this chunk, in order. */
  push(chunk: Buffer): Mp4Box[] {
    this.pending.push(chunk);
    this.pendingLength += chunk.length;
    const boxes: Mp4Box[] = [];
    let buffer = this.pending.length === 1 ? chunk : Buffer.concat(this.pending, this.pendingLength);
    let offset = 0;
    for (;;) {
      const size = boxSize(buffer, offset);
      if (size === undefined || offset + size > buffer.length) break;
      boxes.push({ type: buffer.toString('latin1', offset + 4, offset + 8), data: buffer.subarray(offset, offset + size) });
      offset += size;
    }
    buffer = buffer.subarray(offset);
    this.pending = buffer.length === 0 ? [] : [buffer];
    this.pendingLength = buffer.length;
    return boxes;
  }

  /** Bytes of a box not yet complete (a stream that ends with some left was cut short). */
  get leftover(): number {
    return this.pendingLength;
  }
}

/** The size of the box at `offset`, or undefined while its header is incomplete. */
function boxSize(buffer: Buffer, offset: number): number | undefined {
  if (buffer.length - offset < 8) return undefined;
  const short = buffer.readUInt32BE(offset);
  if (short === 0) throw new Mp4FormatError('a box runs to the end of the stream');
  if (short !== 1) {
    if (short < 8) throw new Mp4FormatError(`a box is ${short} bytes, shorter than its header`);
    return short;
  }
  if (buffer.length - offset < 16) return undefined;
  const large = buffer.readBigUInt64BE(offset + 8);
  if (large < 16n) throw new Mp4FormatError(`a box is ${large} bytes, shorter than its header`);
  if (large > BigInt(Number.MAX_SAFE_INTEGER)) throw new Mp4FormatError('a box is too large');
  return Number(large);
}

/**
 * Groups boxes into segments: everything up to and including moov is the initialization segment,
 * then each moof with the boxes up to and including its mdat is one fragment. Boxes between
 * fragments that carry no media (free, sidx, the closing mfra index) are dropped.
 */
export class Mp4Segmenter {
  private readonly reader = new Mp4BoxReader();
  private initDone = false;
  private collected: Buffer[] = [];

  push(chunk: Buffer): Mp4Segment[] {
    const segments: Mp4Segment[] = [];
    for (const box of this.reader.push(chunk)) {
      const segment = this.take(box);
      if (segment) segments.push(segment);
    }
    return segments;
  }

  /** Whether the stream stopped inside a box or a fragment (then its end was lost). */
  get cutShort(): boolean {
    return this.reader.leftover > 0 || this.collected.length > 0;
  }

  private take(box: Mp4Box): Mp4Segment | undefined {
    if (!this.initDone) {
      this.collected.push(box.data);
      if (box.type !== 'moov') return undefined;
      this.initDone = true;
      return { kind: 'init', data: this.flush() };
    }
    if (box.type === 'moof') {
      this.collected = [box.data];
      return undefined;
    }
    if (this.collected.length === 0) return undefined;
    this.collected.push(box.data);
    if (box.type !== 'mdat') return undefined;
    return { kind: 'fragment', data: this.flush() };
  }

  private flush(): Buffer {
    const data = Buffer.concat(this.collected);
    this.collected = [];
    return data;
  }
}
