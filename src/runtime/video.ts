// Doorbell video's wiring: the video room from the `video` config, the cloud's recording lookup
// handed to it as a function, and its status (does video work, which ffmpeg) in the status file.
import type { ApiClient } from '../cloud/http/api.js';
import { lookupVideo } from '../cloud/video.js';
import type { LockAccessConfig } from '../config.js';
import type { StatusPublisher } from '../status/status-publisher.js';
import type { Logger } from '../util/logger.js';
import { VideoRoom } from '../video/video-room.js';

export function startVideo(config: LockAccessConfig, log: Logger, client: ApiClient, publisher: StatusPublisher): VideoRoom {
  const room: VideoRoom = new VideoRoom({
    config: config.video,
    log,
    lookup: async (doorbellId, dvrId) => (await lookupVideo(client, doorbellId, dvrId)).url,
    onStatus: (video) => {
      publisher.update({ video });
    },
  });
  publisher.update({ video: room.status() });
  return room;
}
