// The doorbell camera's streams when doorbell video cannot work: ffmpeg missing or unusable. The
// stream is refused with a line that names ffmpeg, and pictures go on.
import { afterEach, describe, expect, it, vi } from 'vitest';

import { doorbellUuid, LIVE_VIDEO_REFUSAL } from '../../src/homekit/doorbell-accessory.js';
import type { DoorbellDevice } from '../../src/model/doorbell-device.js';
import { VideoRoom } from '../../src/video/video-room.js';
import { captureLog, hapEnvs, newAccessory } from './hap-env.js';
import { cameraOf, serveDoorbell } from './serve-device.js';
import { noMedia } from '../video/ffmpeg-binary.js';

describe.each(hapEnvs)('the doorbell camera without a usable ffmpeg on $label', ({ api }) => {
  const made: DoorbellDevice[] = [];
  afterEach(() => {
    for (const doorbell of made.splice(0)) doorbell.dispose();
  });

  async function setup() {
    const captured = captureLog();
    const video = new VideoRoom({
      config: { replayMinutes: 60, secureVideo: false, ffmpegPath: '/nonexistent/ffmpeg' },
      log: captured.log,
      media: noMedia, lookup: () => Promise.reject(new Error('no lookup expected')),
    });
    await video.ready;
    const doorbell = serveDoorbell({ api, log: captured.log, fetchImage: () => Promise.resolve(Buffer.from('still')), video }, newAccessory(api, 'Front Doorbell', doorbellUuid(api, 'D1')), { kind: 'doorbell', id: 'D1', name: 'Front Doorbell', motionTimeoutSeconds: 30 });
    made.push(doorbell);
    return { doorbell, captured, video };
  }

  it('a stream is refused with one line naming ffmpeg; no ffmpeg runs', async () => {
    const { doorbell, captured, video } = await setup();
    const prepared = vi.fn();
    cameraOf(doorbell).prepareStream({ sessionID: 's1' } as never, prepared);
    expect(prepared).toHaveBeenCalledWith(expect.objectContaining({ message: expect.stringContaining(LIVE_VIDEO_REFUSAL) as unknown }));
    expect(captured.text('info')).toMatch(/Front Doorbell: live video is not available .*doorbell video needs ffmpeg: see the warning at start-up/);
    expect(captured.lines.filter((line) => line.level === 'warn' && /Doorbell video is off: no program at \/nonexistent\/ffmpeg/.test(line.message))).toHaveLength(1);
    expect(video.running).toBe(0);
  });

  it('the still picture is still the snapshot', async () => {
    const { doorbell } = await setup();
    const image = await new Promise<Buffer | undefined>((resolve) => {
      cameraOf(doorbell).handleSnapshotRequest({ width: 640, height: 360 }, (_error, buffer) => {
        resolve(buffer);
      });
    });
    expect(image?.length).toBeGreaterThan(0);
  });
});
