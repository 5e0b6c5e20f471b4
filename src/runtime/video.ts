// Doorbell video's wiring: the video room from the `video` config, the cloud's recording lookup
// and media fetch (the plugin's trust, plain http only beside a plain-http baseUrl) handed to it,
// its list of running ffmpeg children in the plugin's folder, and its status (does video work,
// which ffmpeg) in the status file. ffmpeg is checked once start-up's setup against the account
// has run: the check's processes and the cameras it lets set up would otherwise take the CPU from
// the token renewal and the registrations.
import type { ApiClient } from '../cloud/http/api.js';
import { mediaAccess } from '../cloud/media-fetch.js';
import { lookupVideo } from '../cloud/video.js';
import type { LockAccessConfig } from '../config.js';
import type { StatusPublisher } from '../status/status-publisher.js';
import type { Storage } from '../storage.js';
import type { Logger } from '../util/logger.js';
import type { Shutdown } from '../util/shutdown.js';
import { CHILD_LEDGER_FILE } from '../video/child-ledger.js';
import { VideoRoom } from '../video/video-room.js';

/** `clientOf`: the client of the account that owns a doorbell (its recordings are looked up with that account's token). */
export function startVideo(config: LockAccessConfig, log: Logger, clientOf: (doorbellId: string) => ApiClient, publisher: StatusPublisher, storage: Storage, checkAfter: Promise<void>): VideoRoom {
  const room: VideoRoom = new VideoRoom({
    config: config.video,
    checkAfter,
    log,
    lookup: async (doorbellId, dvrId) => (await lookupVideo(clientOf(doorbellId), doorbellId, dvrId)).url,
    media: mediaAccess(config.baseUrl),
    ledger: { read: () => storage.readText(CHILD_LEDGER_FILE), write: (value) => storage.write(CHILD_LEDGER_FILE, value) },
    onStatus: (video) => {
      publisher.update({ video });
    },
  });
  publisher.update({ video: room.status() });
  return room;
}

/** The longest the check waits for start-up's setup (a service that does not answer must not keep video off). */
const CHECK_WAIT_MS = 10_000;

/** When doorbell video checks ffmpeg: `opened` resolves once `openAfter`'s setup has run, at most CHECK_WAIT_MS later, or at shutdown. */
export class VideoCheckGate {
  readonly opened: Promise<void>;
  private open!: () => void;

  constructor() {
    this.opened = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  openAfter(setupSettled: Promise<unknown>, shutdown: Shutdown): void {
    const timer = setTimeout(this.open, CHECK_WAIT_MS);
    timer.unref();
    const open = () => {
      clearTimeout(timer);
      this.open();
    };
    void setupSettled.then(open, open);
    shutdown.on('halt', open);
  }
}
