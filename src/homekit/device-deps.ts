// What the devices and their HomeKit views need from outside, handed in by the runtime: Homebridge's
// API, the log, and the cloud's abilities as plain functions, so neither imports src/cloud.
import type { API } from 'homebridge';

import type { Logger } from '../util/logger.js';
import type { DoorHistorySource } from './door-history-store.js';
import type { LockAction } from '../model/lock-commands.js';
import type { FetchImage } from './snapshot-cache.js';

export interface DeviceDeps {
  api: API;
  log: Logger;
  /** Sends a remote command to a lock; rejects when the service or the lock's bridge refused it. */
  operate: (lockId: string, action: LockAction) => Promise<void>;
  /** Plain words for why a command failed, with what to do where the cause has advice; ends with a full stop. */
  describeCommandFailure: (error: unknown) => string;
  /** Loads a motion still; deadlines and size limits are the fetcher's job. */
  fetchImage: FetchImage;
  /** Keeps each door's Eve history on disk; without it the history lives in memory only. */
  doorHistory?: DoorHistorySource;
  /** Epoch ms now (Date.now when absent): the devices' clock, the door history's, and what saved ordering marks are checked against. */
  now?: () => number;
}
