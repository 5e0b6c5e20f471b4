// The video of a doorbell event (spec "Video event lookup").
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { RequestRejectedError } from '../../src/cloud/http/errors.js';
import { lookupVideo } from '../../src/cloud/video.js';
import { type CloudFixture, startCloudFixture } from './cloud-fixture.js';

describe('spec "Video event lookup": GET /doorbells/{id}/videoevent?dvrID=', () => {
  let fx: CloudFixture;
  beforeEach(async () => {
    fx = await startCloudFixture({ doorbells: [{ id: 'D1' }] });
  });
  afterEach(async () => {
    await fx.close();
  });

  it('video lookup: GET /doorbells/{id}/videoevent?dvrID= gives the playlist url', async () => {
    const video = await lookupVideo(fx.client, 'D1', 'abc-123');
    // The playlist address may be a signed link: it is handed on whole, query included.
    const url = new URL(video.url);
    expect(`${url.protocol}//${url.hostname}${url.pathname}`).toBe('http://127.0.0.1/hls/abc-123/index.m3u8');
    expect(url.searchParams.get('signature')).toBe('SIM-SECRET-SIGNATURE');
    await expect(lookupVideo(fx.client, 'NOPE', 'abc')).rejects.toBeInstanceOf(RequestRejectedError);
  });
});
