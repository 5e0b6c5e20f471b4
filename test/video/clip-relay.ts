// A recording as the video room reads it in tests: a folder (made by makeClip) served over http on
// 127.0.0.1, opened through the plugin's HLS relay with the plugin's own media fetch, so ffmpeg gets
// the relayed playlist on its standard input exactly as in a stream.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';

import { mediaAccess } from '../../src/cloud/media-fetch.js';
import { HlsRelay, type RelayedRecording } from '../../src/video/hls-relay.js';
import { keptLog } from './ffmpeg-binary.js';

export interface ServedFolder {
  /** The address of the folder's index.m3u8, with a signed-looking query. */
  playlist: string;
  /** Every path (and query) asked of the server. */
  seen: string[];
  close(): Promise<void>;
}

/** Serves `dir` on 127.0.0.1 (404 for anything not in it). */
export async function serveFolder(dir: string, host = '127.0.0.1'): Promise<ServedFolder> {
  const seen: string[] = [];
  const server: Server = createServer((request, response) => {
    seen.push(request.url ?? '');
    const name = basename(new URL(request.url ?? '/', 'http://x').pathname);
    readFile(join(dir, name)).then(
      (body) => response.writeHead(200).end(body),
      () => response.writeHead(404).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    playlist: `http://${host}:${(server.address() as AddressInfo).port}/index.m3u8?signature=FOLDER-SECRET`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A relay with the plugin's media fetch beside a plain-http service address (as the simulator's). */
export function testRelay(): HlsRelay {
  return new HlsRelay(mediaAccess('http://127.0.0.1'), keptLog());
}

/** The folder's recording opened through `relay`. */
export function openServed(relay: HlsRelay, folder: ServedFolder): Promise<RelayedRecording> {
  return relay.open(folder.playlist);
}
