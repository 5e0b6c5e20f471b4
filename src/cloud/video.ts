// Video event lookup: GET /doorbells/{id}/videoevent?dvrID= answers { url } (an .m3u8 playlist).
import { z } from 'zod/v3';

import type { ApiClient } from './http/api.js';

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

/**
 * The recording's playlist address. Throws the client's typed errors; an answer without a usable
 * http(s) `url` fails the client's schema check (UnexpectedResponseError).
 */
export async function lookupVideo(client: ApiClient, doorbellId: string, dvrId: string): Promise<VideoEvent> {
  const answer = await client.request('GET', `/doorbells/${encodeURIComponent(doorbellId)}/videoevent`, { query: { dvrID: dvrId }, schema: videoAnswerSchema });
  return { url: answer.url };
}
