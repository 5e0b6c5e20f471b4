// Doorbell video's wiring: the video room from the `video` config, the cloud's recording lookup
// handed to it as a function, its list of running ffmpeg children in the plugin's folder, and its
// status (does video work, which ffmpeg) in the status file.
import type { ApiClient } from '../cloud/http/api.js';
import { lookupVideo } from '../cloud/video.js';
import type { LockAccessConfig } from '../config.js';
import type { StatusPublisher } from '../status/status-publisher.js';
import type { Storage } from '../storage.js';
import type { Logger } from '../util/logger.js';
import { CHILD_LEDGER_FILE } from '../video/child-ledger.js';
import { VideoRoom } from '../video/video-room.js';

export function startVideo(config: LockAccessConfig, log: Logger, client: ApiClient, publisher: StatusPublisher, storage: Storage): VideoRoom {
  const room: VideoRoom = new VideoRoom({
    config: config.video,
    log,
    lookup: async (doorbellId, dvrId) => (await lookupVideo(client, doorbellId, dvrId)).url,
    ledger: { read: () => storage.readText(CHILD_LEDGER_FILE), write: (value) => storage.write(CHILD_LEDGER_FILE, value) },
    onStatus: (video) => {
      publisher.update({ video });
    },
  });
  publisher.update({ video: room.status() });
  return room;
}
