// Video event lookup: GET /doorbells/{id}/videoevent?dvrID= answers { url } (an .m3u8 playlist).
import { z } from 'zod';

import type { ApiClient } from './api.js';
import { RequestRejectedError } from './errors.js';

const videoAnswerSchema = z.object({
  url: z.string().refine((value) => {
    try {
      const protocol = new URL(value).protocol;
      return protocol === 'https:' || protocol === 'http:';
    } catch {
      return false;
    }
  }),
});

export type VideoEvent = z.infer<typeof videoAnswerSchema>;

/** The recording's playlist address; throws the client's typed errors, or RequestRejectedError for an answer without a usable url. */
export async function lookupVideo(client: ApiClient, doorbellId: string, dvrId: string): Promise<VideoEvent> {
  const answer = await client.request('GET', `/doorbells/${encodeURIComponent(doorbellId)}/videoevent`, { query: { dvrID: dvrId } });
  const parsed = videoAnswerSchema.safeParse(answer);
  if (!parsed.success) throw new RequestRejectedError('the service answered the video lookup without a usable recording address');
  return { url: parsed.data.url };
}
