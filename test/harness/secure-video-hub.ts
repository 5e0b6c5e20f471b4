// What a home hub does before it can record a camera, for the Secure Video tests and the bench:
// select a recording configuration, turn recording (and its audio) on, and hear the trigger. Also
// the clips they record: a moving test pattern made as HLS at test time.
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';

import { ffmpegOnce } from './clip-cache.js';
import { selectedRecordingConfiguration, type HubSelection } from './data-stream.js';
import { characteristicId, type HapAccessoryInfo, type HapController } from './hap.js';

const { Service: S, Characteristic: C } = hap;

/** The hub's usual choice: 720p at 30 fps, 4-s fragments, AAC-LC at 24 kHz. */
export const HUB_720P: HubSelection = { width: 1280, height: 720, fps: 30, bitrateKbps: 1000, profile: 1, level: 2, fragmentMs: 4000, sampleRate: 2, audioKbps: 32 };

/** A moving test pattern as HLS (2-s segments) in `dir`: `seconds` long, with a tone when `audio` (made once, clip-cache.ts). */
export function makeClip(ffmpeg: string, dir: string, seconds: number, audio: boolean): string {
  return ffmpegOnce(ffmpeg, dir, (folder) => [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=15',
    ...(audio ? ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=16000'] : []),
    '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '30',
    ...(audio ? ['-c:a', 'aac', '-b:a', '32k'] : ['-an']),
    '-f', 'hls', '-hls_time', '2', '-hls_playlist_type', 'vod', '-hls_segment_filename', join(folder, 'seg%d.ts'), join(folder, 'index.m3u8'),
  ], 'the test clip');
}

/**
 * The hub's set-up of a camera: a recording configuration, recording on, and recording audio on
 * (a timed write). Throws when HAP refuses a write.
 */
export async function enableRecording(controller: HapController, camera: HapAccessoryInfo, selection: HubSelection = HUB_720P, audio = true): Promise<void> {
  const id = (characteristic: string) => characteristicId(camera, S.CameraRecordingManagement.UUID, characteristic);
  const statuses = [
    await controller.write(id(C.SelectedCameraRecordingConfiguration.UUID), selectedRecordingConfiguration(selection)),
    await controller.write(id(C.Active.UUID), 1),
    await controller.timedWrite(id(C.RecordingAudioActive.UUID), audio ? 1 : 0),
  ];
  if (statuses.some((status) => status !== 0)) throw new Error(`the camera refused the recording set-up (HAP statuses ${statuses.join(', ')})`);
}

/** The camera's recording trigger ("<name> Recording"), as "aid.iid". */
export function recordingTriggerId(camera: HapAccessoryInfo): string {
  return characteristicId(camera, S.MotionSensor.UUID, C.MotionDetected.UUID, `${camera.name} Recording`);
}

/** The camera's SetupDataStreamTransport, as "aid.iid". */
export function dataStreamSetupId(camera: HapAccessoryInfo): string {
  return characteristicId(camera, S.DataStreamTransportManagement.UUID, C.SetupDataStreamTransport.UUID);
}
