// The video of the long soak, as Apple's devices ask for it: a camera view (a real HAP camera
// stream, watched until video arrives and for a few seconds more) and a Secure Video clip (the
// hub's download over a HomeKit Data Stream after the recording trigger).
import { CameraViewer, streamServices } from '../../test/harness/camera-viewer.js';
import { DataStreamClient } from '../../test/harness/data-stream.js';
import type { HapAccessoryInfo, HapController, Subscription } from '../../test/harness/hap.js';
import type { RunningHomebridge } from '../../test/harness/homebridge.js';
import { dataStreamSetupId } from '../../test/harness/secure-video-hub.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a camera view is watched after its first video packet. */
export const VIEW_SECONDS = 8;

/** One camera view of `camera`: true when video arrived. */
export async function cameraView(controller: HapController, camera: HapAccessoryInfo, ffmpeg: string): Promise<boolean> {
  const ids = streamServices(camera)[0];
  if (!ids) throw new Error(`${camera.name} has no camera stream`);
  const viewer = await CameraViewer.setUp(controller, ids, { ffmpeg });
  try {
    if ((await viewer.start({ ffmpeg })) !== 0) return false;
    for (let wait = 0; viewer.firstPacketAt === undefined && wait < 400; wait += 1) await sleep(25);
    if (viewer.firstPacketAt === undefined) return false;
    await sleep(VIEW_SECONDS * 1000);
    return viewer.packets > 0;
  } finally {
    await viewer.end().catch(() => undefined);
    viewer.close();
  }
}

/**
 * One Secure Video clip: `announce` makes a recording available, the hub waits for the trigger
 * and downloads the clip to its end. True when the whole clip came.
 */
export async function secureVideoClip(hb: RunningHomebridge, controller: HapController, camera: HapAccessoryInfo, trigger: Subscription, announce: () => Promise<unknown>): Promise<boolean> {
  const before = trigger.events.length;
  await announce();
  await trigger.waitFor((event) => trigger.events.indexOf(event) >= before && (event.value === true || event.value === 1), 'the recording trigger', 30_000);
  const client = await DataStreamClient.open({ port: hb.bridgePort, username: hb.username, pin: hb.pin }, controller.pairingData(), dataStreamSetupId(camera));
  try {
    const { packets, end } = await client.record({ timeoutMs: 60_000 });
    return end.how === 'endOfStream' && packets[0]?.dataType === 'mediaInitialization' && packets.length > 1;
  } finally {
    await client.close();
  }
}
