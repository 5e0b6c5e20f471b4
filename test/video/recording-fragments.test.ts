// The packet logic of a recording with a stand-in process owner that plays canned ffmpeg output:
// the real ffmpeg runs in the end-to-end recording test (test/e2e/secure-video.test.ts).
import { PassThrough } from 'node:stream';

import { afterEach, describe, expect, it, vi } from 'vitest';

import type { FfmpegExit } from '../../src/video/ffmpeg-processes.js';
import { RecordingFailed, recordingPackets, type RecordingPacket, type RecordingProcesses, type RecordingRun } from '../../src/video/recording-fragments.js';

function box(type: string, payload = ''): Buffer {
  const body = Buffer.from(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

const INIT = Buffer.concat([box('ftyp', 'isom'), box('moov', 'm')]);
const fragment = (n: number): Buffer => Buffer.concat([box('moof', `f${n}`), box('mdat', `frames ${n}`)]);

/** A process owner whose one child writes what the test tells it to, and exits when told or stopped. */
class CannedProcesses implements RecordingProcesses {
  readonly out = new PassThrough();
  args: readonly string[] = [];
  stops = 0;
  private resolveExit: (exit: FfmpegExit) => void = () => undefined;
  private readonly exitPromise = new Promise<FfmpegExit>((resolve) => {
    this.resolveExit = resolve;
  });
  private ended = false;

  readonly input = new PassThrough();

  spawn(args: readonly string[]) {
    this.args = args;
    return {
      stdout: this.out,
      stdin: this.input,
      exited: this.exitPromise,
      stop: () => {
        this.stops++;
        this.exit({ code: null, signal: 'SIGTERM', stopped: true, errorOutput: '' });
        return this.exitPromise;
      },
    };
  }

  exit(exit: FfmpegExit): void {
    if (this.ended) return;
    this.ended = true;
    this.out.end();
    this.resolveExit(exit);
  }
}

function runOf(processes: CannedProcesses, extra: Partial<RecordingRun> = {}): RecordingRun {
  return {
    processes,
    label: 'Front Doorbell recording',
    playlist: '#EXTM3U\n#EXTINF:4,\nhttp://127.0.0.1:9/opaque/0.ts\n#EXT-X-ENDLIST',
    format: { width: 640, height: 360, fps: 15, bitrateKbps: 800, profile: 'main', level: '3.1', fragmentMs: 4000 },
    ...extra,
  };
}

async function collect(generator: AsyncGenerator<RecordingPacket>): Promise<{ packets: RecordingPacket[]; error?: unknown }> {
  const packets: RecordingPacket[] = [];
  try {
    for await (const packet of generator) packets.push(packet);
    return { packets };
  } catch (error) {
    return { packets, error };
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a recording as packets', () => {
  it('sends the initialization segment at once, without waiting for a fragment', async () => {
    const processes = new CannedProcesses();
    const generator = recordingPackets(runOf(processes));
    processes.out.write(INIT);
    expect(await generator.next()).toEqual({ done: false, value: { data: INIT, isLast: false } });
    await generator.return();
  });

  it('sends the initialization segment, then each fragment, and marks the last one last', async () => {
    const processes = new CannedProcesses();
    const result = collect(recordingPackets(runOf(processes)));
    processes.out.write(INIT.subarray(0, 5));
    processes.out.write(Buffer.concat([INIT.subarray(5), fragment(1), fragment(2).subarray(0, 3)]));
    processes.out.write(Buffer.concat([fragment(2).subarray(3), fragment(3)]));
    processes.exit({ code: 0, signal: null, stopped: false, errorOutput: '' });
    const { packets, error } = await result;
    expect(error).toBeUndefined();
    expect(packets.map((p) => p.data)).toEqual([INIT, fragment(1), fragment(2), fragment(3)]);
    expect(packets.map((p) => p.isLast)).toEqual([false, false, false, true]);
    // The playlist goes in on standard input, never as an argument.
    expect(processes.args).toContain('pipe:0');
    expect(processes.args.join(' ')).not.toContain('opaque');
    expect(String(processes.input.read())).toMatch(/^#EXTM3U\n.*opaque\/0\.ts/s);
  });

  it('a clip that fails before any fragment ends with RecordingFailed, saying why, after the initialization segment only', async () => {
    const processes = new CannedProcesses();
    const result = collect(recordingPackets(runOf(processes)));
    processes.out.write(INIT);
    processes.exit({ code: 1, signal: null, stopped: false, errorOutput: '[hls @ 0x1] Failed to open segment of playlist 0 from https://media.example' });
    const { packets, error } = await result;
    // The initialization segment leaves at once; nothing follows it.
    expect(packets).toEqual([{ data: INIT, isLast: false }]);
    expect(error).toBeInstanceOf(RecordingFailed);
    expect((error as RecordingFailed).message).toBe('ffmpeg exited with code 1: [hls @ 0x1] Failed to open segment of playlist 0 from https://media.example');
    expect((error as RecordingFailed).partial).toBe(true);
  });

  it('ffmpeg crashing mid-clip ends the clip at the last complete fragment, marked last, and says so', async () => {
    const processes = new CannedProcesses();
    const cutShort = vi.fn();
    const result = collect(recordingPackets(runOf(processes, { onCutShort: cutShort })));
    processes.out.write(Buffer.concat([INIT, fragment(1), fragment(2), box('moof', 'f3')]));
    processes.exit({ code: null, signal: 'SIGSEGV', stopped: false, errorOutput: '' });
    const { packets, error } = await result;
    expect(error).toBeUndefined();
    expect(packets.map((p) => [p.data, p.isLast])).toEqual([
      [INIT, false],
      [fragment(1), false],
      [fragment(2), true],
    ]);
    expect(cutShort).toHaveBeenCalledWith('ffmpeg was ended by SIGSEGV');
  });

  it('the hub closing the stream (abort) stops ffmpeg at once and ends without another packet', async () => {
    const processes = new CannedProcesses();
    const controller = new AbortController();
    const generator = recordingPackets(runOf(processes, { signal: controller.signal }));
    processes.out.write(Buffer.concat([INIT, fragment(1)]));
    const first = await generator.next();
    expect(first.value).toEqual({ data: INIT, isLast: false });
    // The generator waits for more output; the close arrives meanwhile.
    const next = generator.next();
    controller.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(processes.stops).toBeGreaterThan(0);
  });

  it('returning early (the consumer stops) stops ffmpeg too', async () => {
    const processes = new CannedProcesses();
    const generator = recordingPackets(runOf(processes));
    processes.out.write(Buffer.concat([INIT, fragment(1)]));
    await generator.next();
    await generator.return();
    expect(processes.stops).toBeGreaterThan(0);
  });

  it('ffmpeg writing nothing for the stall time is stopped and the recording fails', async () => {
    vi.useFakeTimers();
    const processes = new CannedProcesses();
    const result = collect(recordingPackets(runOf(processes, { stallMs: 5_000 })));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(processes.stops).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    const { packets, error } = await result;
    expect(packets).toEqual([]);
    expect((error as RecordingFailed).message).toBe('ffmpeg wrote nothing for 5 s');
  });

  it('output that is not MP4 stops ffmpeg and fails the recording', async () => {
    const processes = new CannedProcesses();
    const result = collect(recordingPackets(runOf(processes)));
    processes.out.write(Buffer.from([0, 0, 0, 2, 0x61, 0x62, 0x63, 0x64]));
    const { error } = await result;
    expect((error as RecordingFailed).message).toMatch(/^ffmpeg wrote MP4 that cannot be read/);
    expect(processes.stops).toBeGreaterThan(0);
  });
});

describe('a recording the process owner refuses', () => {
  it('fails with the owner\'s words, before any packet', async () => {
    const refusing: RecordingProcesses = {
      spawn: () => {
        throw new Error('the plugin is shutting down');
      },
    };
    const { packets, error } = await collect(recordingPackets(runOf(new CannedProcesses(), { processes: refusing })));
    expect(packets).toEqual([]);
    expect(error).toBeInstanceOf(RecordingFailed);
    expect((error as RecordingFailed).message).toBe('the plugin is shutting down');
  });
});
