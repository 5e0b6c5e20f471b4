// The doorbell's still-image download, built on the cloud layer's node:http fetch and handed to the
// device layer as a plain function (src/devices does no networking of its own).
import { nodeFetch } from '../cloud/node-fetch.js';
import type { FetchImage } from '../devices/snapshot-cache.js';

/** Images bigger than this are refused: a still is tens of KiB, and HomeKit chokes on huge snapshots. */
export const MAX_SNAPSHOT_BYTES = 5 * 1024 * 1024;
export const SNAPSHOT_FETCH_TIMEOUT_MS = 5000;

/** Plain fetch with a deadline and a size cap; the still URLs come from signed callbacks. */
export const fetchImage: FetchImage = async (url) => {
  const response = await nodeFetch(url, { signal: AbortSignal.timeout(SNAPSHOT_FETCH_TIMEOUT_MS), redirect: 'follow' });
  if (!response.ok) throw new Error(`the image server answered ${response.status}`);
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_SNAPSHOT_BYTES) throw new Error('the image is too large');
  const body = Buffer.from(await response.arrayBuffer());
  if (body.length === 0) throw new Error('the image is empty');
  if (body.length > MAX_SNAPSHOT_BYTES) throw new Error('the image is too large');
  return body;
};
