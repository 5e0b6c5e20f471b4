// Media the service hosts: the HLS recording for any dvrID and the motion still image.
// Served with permissive CORS so hls.js in a browser (the settings UI) can fetch them.
// Two stills that misbehave, for the plugin's retries: one that fails its first N requests with a
// 5xx, and one that redirects to another scheme (which the plugin must refuse).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { FastifyInstance } from 'fastify';

const assetsDir = new URL('./assets/', import.meta.url);
const read = (name: string): Buffer => readFileSync(new URL(name, assetsDir));

const SEGMENTS = ['seg0.ts', 'seg1.ts', 'seg2.ts'];

export interface MediaRequests {
  /** How many requests reached this still's path (query included), e.g. `/media/flaky/D1/a.jpg?fail=2`. */
  count(path: string): number;
}

/** `recordings`: dvrID -> a folder with a recording made at test time (index.m3u8 and its segments). */
export function registerMediaRoutes(app: FastifyInstance, recordings: Record<string, string> = {}): MediaRequests {
  const requests = new Map<string, number>();
  const hit = (url: string): number => {
    const count = (requests.get(url) ?? 0) + 1;
    requests.set(url, count);
    return count;
  };
  const playlist = read('index.m3u8');
  // On disk as .mpegts: a .ts file would be taken for TypeScript by tsc and eslint.
  const segments = new Map(SEGMENTS.map((name) => [name, read(name.replace(/\.ts$/, '.mpegts'))]));
  const jpeg = read('motion.jpg');

  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith('/hls/') || request.url.startsWith('/media/')) void reply.header('access-control-allow-origin', '*');
    return payload;
  });

  const folderOf = (dvrID: string): string | undefined => (Object.hasOwn(recordings, dvrID) ? recordings[dvrID] : undefined);
  // Playlist faults by dvrID: playlist-empty (an empty answer), playlist-text (not a playlist),
  // playlist-gap (its second and third segments answer 404).
  app.get('/hls/:dvrID/index.m3u8', async (request, reply) => {
    const { dvrID } = request.params as { dvrID: string };
    if (dvrID.startsWith('playlist-empty')) return reply.type('application/vnd.apple.mpegurl').send('');
    if (dvrID.startsWith('playlist-text')) return reply.type('text/html').send('<html><body>Sign in to continue</body></html>');
    const folder = folderOf(dvrID);
    return reply.type('application/vnd.apple.mpegurl').send(folder === undefined ? playlist : await readFile(join(folder, 'index.m3u8')));
  });
  app.get('/hls/:dvrID/:segment', async (request, reply) => {
    const { dvrID, segment } = request.params as { dvrID: string; segment: string };
    if (dvrID.startsWith('playlist-gap') && segment !== 'seg0.ts') return reply.code(404).send({ message: 'Not Found' });
    const folder = folderOf(dvrID);
    if (folder !== undefined) {
      const file = await readFile(join(folder, basename(segment))).catch(() => undefined);
      if (!file) return reply.code(404).send({ message: 'Not Found' });
      return reply.type('video/mp2t').send(file);
    }
    const data = segments.get(segment);
    if (!data) return reply.code(404).send({ message: 'Not Found' });
    return reply.type('video/mp2t').send(data);
  });
  app.get('/media/motion/:doorbellID/:image', async (request, reply) => {
    hit(request.url);
    if (!(request.params as { image: string }).image.endsWith('.jpg')) return reply.code(404).send({ message: 'Not Found' });
    return reply.type('image/jpeg').send(jpeg);
  });
  // ?fail=N&status=5xx: the first N requests of this exact URL fail (503 by default), then the still.
  app.get('/media/flaky/:doorbellID/:image', async (request, reply) => {
    const count = hit(request.url);
    const query = request.query as { fail?: string; status?: string };
    const failures = Number(query.fail ?? '1');
    const status = Number(query.status ?? '503');
    if (!Number.isInteger(failures) || !Number.isInteger(status) || status < 500 || status > 599) return reply.code(400).send({ message: 'fail must be a count, status a 5xx' });
    if (count <= failures) return reply.code(status).send({ message: 'Service Unavailable (simulated still failure)' });
    return reply.type('image/jpeg').send(jpeg);
  });
  // ?scheme=https (default): a redirect to the same still under another scheme, on the same host.
  app.get('/media/redirect/:doorbellID/:image', async (request, reply) => {
    hit(request.url);
    const { doorbellID, image } = request.params as { doorbellID: string; image: string };
    const scheme = (request.query as { scheme?: string }).scheme ?? 'https';
    const host = request.headers.host ?? '127.0.0.1';
    return reply.redirect(`${scheme}://${host}/media/motion/${encodeURIComponent(doorbellID)}/${encodeURIComponent(image)}`, 302);
  });
  return { count: (path) => requests.get(path) ?? 0 };
}
