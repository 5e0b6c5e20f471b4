// The plugin's HLS relay: ffmpeg never fetches a recording from the network itself (its TLS
// check is off by default, and it follows https to http). A recording is opened here: its playlist
// is fetched with the plugin's own trust (the MediaFetch handed in: Node's certificate store, the
// fetch rule of util/fetch-trust.ts), checked and rewritten so that every part of it (segments,
// keys, variant playlists) has an opaque address on a loopback server of ours. ffmpeg gets the
// rewritten playlist on its standard input and reads the parts from us; each part is fetched from
// the network only when ffmpeg asks, and only while its recording is open. Neither the signed
// playlist address nor the segments' addresses ever reach ffmpeg's command line; the relay's
// addresses only name a random path that ends with the recording.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';
import { extensionOf, PlaylistRefused, rewritePlaylist } from './playlist-rewrite.js';

/**
 * Fetches one address with the plugin's trust, following redirects only as the fetch rule allows;
 * answers the bytes and the address they came from (after redirects). Rejects with an error whose
 * message holds no address.
 */
export type MediaFetch = (address: URL, signal: AbortSignal) => Promise<{ body: Buffer; url: URL }>;

export interface MediaAccess {
  fetch: MediaFetch;
  /** The service address is plain http (a local simulator): plain http recordings are fetched too. */
  httpAllowed: boolean;
}

/** One recording opened for ffmpeg: its rewritten playlist, until closed. */
export interface RelayedRecording {
  /** The playlist as ffmpeg reads it on its standard input (see PIPED_PLAYLIST). */
  readonly playlist: string;
  /** Ends the recording's addresses (ffmpeg's later requests get 404) and any fetch in flight. */
  close(): void;
}

interface Opened {
  parts: URL[];
  stop: AbortController;
  /** Said once per recording: a part that could not be fetched. */
  warned: boolean;
}

const PART_PATH = /^\/([A-Za-z0-9_-]{22})\/(\d{1,6})(?:\.[a-z0-9]{1,5})?$/;
const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';

export class HlsRelay {
  private readonly opened = new Map<string, Opened>();
  private server: Promise<{ server: Server; port: number }> | undefined;

  constructor(
    private readonly media: MediaAccess,
    private readonly log: Logger,
  ) {}

  /** Fetches and checks the playlist; rejects with words without an address (PlaylistRefused when it must not be played). */
  async open(address: string, signal?: AbortSignal): Promise<RelayedRecording> {
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      throw new PlaylistRefused('the recording address is not valid');
    }
    const { port } = await this.listening();
    const token = randomBytes(16).toString('base64url');
    const entry: Opened = { parts: [], stop: new AbortController(), warned: false };
    const close = (): void => {
      entry.stop.abort();
      this.opened.delete(token);
    };
    signal?.addEventListener('abort', close, { once: true });
    this.opened.set(token, entry);
    try {
      const playlist = await this.playlist(url, token, port, entry);
      if (signal?.aborted === true) throw new PlaylistRefused('the recording was no longer wanted');
      return { playlist, close };
    } catch (error) {
      close();
      throw error;
    } finally {
      signal?.removeEventListener('abort', close);
    }
  }

  /** Closes the server and every recording (shutdown). */
  async stop(): Promise<void> {
    for (const entry of this.opened.values()) entry.stop.abort();
    this.opened.clear();
    const started = await this.server?.catch(() => undefined);
    this.server = undefined;
    if (!started) return;
    started.server.closeAllConnections();
    await new Promise((resolve) => started.server.close(resolve));
  }

  /** How many recordings are open (for tests and the soak's count). */
  get openCount(): number {
    return this.opened.size;
  }

  /** Fetches a playlist (the recording's, or a variant of it) and rewrites it to our addresses. */
  private async playlist(address: URL, token: string, port: number, entry: Opened): Promise<string> {
    const { body, url } = await this.media.fetch(address, entry.stop.signal);
    return this.rewrite(body, url, token, port, entry);
  }

  private rewrite(body: Buffer, base: URL, token: string, port: number, entry: Opened): string {
    return rewritePlaylist(body.toString('utf8'), base, this.media.httpAllowed, (part) => {
      entry.parts.push(part);
      const extension = extensionOf(part);
      return `http://127.0.0.1:${port}/${token}/${entry.parts.length - 1}${extension === '' ? '' : `.${extension}`}`;
    });
  }

  private listening(): Promise<{ server: Server; port: number }> {
    this.server ??= new Promise((resolve, reject) => {
      const server = createServer((request, response) => {
        void this.serve(request, response, server);
      });
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        server.on('error', () => undefined);
        resolve({ server, port: (server.address() as AddressInfo).port });
      });
    });
    // A server that could not start is tried again at the next recording.
    this.server.catch(() => {
      this.server = undefined;
    });
    return this.server;
  }

  private async serve(request: IncomingMessage, response: ServerResponse, server: Server): Promise<void> {
    const match = PART_PATH.exec(request.url ?? '');
    const entry = match ? this.opened.get(match[1] ?? '') : undefined;
    const part = entry?.parts[Number(match?.[2])];
    if (request.method !== 'GET' || !entry || !part || !match) {
      response.writeHead(404).end();
      return;
    }
    // ffmpeg gone, or the recording closed: the fetch ends.
    const stop = (): void => {
      entry.stop.signal.removeEventListener('abort', stop);
      fetching.abort();
    };
    const fetching = new AbortController();
    entry.stop.signal.addEventListener('abort', stop, { once: true });
    response.once('close', stop);
    try {
      const { body, url } = await this.media.fetch(part, AbortSignal.any([fetching.signal, entry.stop.signal]));
      if (body.subarray(0, 16).toString('latin1').trimStart().startsWith('#EXTM3U')) {
        const port = (server.address() as AddressInfo).port;
        response.writeHead(200, { 'content-type': PLAYLIST_TYPE }).end(this.rewrite(body, url, match[1] ?? '', port, entry));
      } else {
        response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
      }
    } catch (error) {
      if (!fetching.signal.aborted && !entry.warned) {
        entry.warned = true;
        const why = error instanceof PlaylistRefused ? error.message : errorText(error);
        this.log.warn(`A part of a recording could not be fetched (${why}).`);
      }
      if (!response.headersSent) response.writeHead(502).end();
    } finally {
      stop();
    }
  }
}
