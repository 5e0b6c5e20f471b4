// Media the service hosts: the HLS recording for any dvrID and the motion still image.
// Served with permissive CORS so hls.js in a browser (the settings UI) can fetch them.
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const assetsDir = new URL('./assets/', import.meta.url);
const read = (name: string): Buffer => readFileSync(new URL(name, assetsDir));

const SEGMENTS = ['seg0.ts', 'seg1.ts', 'seg2.ts'];

export function registerMediaRoutes(app: FastifyInstance): void {
  const playlist = read('index.m3u8');
  // On disk as .mpegts: a .ts file would be taken for TypeScript by tsc and eslint.
  const segments = new Map(SEGMENTS.map((name) => [name, read(name.replace(/\.ts$/, '.mpegts'))]));
  const jpeg = read('motion.jpg');

  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith('/hls/') || request.url.startsWith('/media/')) void reply.header('access-control-allow-origin', '*');
    return payload;
  });

  app.get('/hls/:dvrID/index.m3u8', async (_request, reply) => reply.type('application/vnd.apple.mpegurl').send(playlist));
  app.get('/hls/:dvrID/:segment', async (request, reply) => {
    const data = segments.get((request.params as { segment: string }).segment);
    if (!data) return reply.code(404).send({ message: 'Not Found' });
    return reply.type('video/mp2t').send(data);
  });
  app.get('/media/motion/:doorbellID/:image', async (request, reply) => {
    if (!(request.params as { image: string }).image.endsWith('.jpg')) return reply.code(404).send({ message: 'Not Found' });
    return reply.type('image/jpeg').send(jpeg);
  });
}
