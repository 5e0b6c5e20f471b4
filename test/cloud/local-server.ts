// A plain HTTP server on 127.0.0.1 for tests that need to see exactly what a call sent and to
// answer it in any way the service could (statuses, headers, redirects, broken bodies).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type LocalHandler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface LocalServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  base: string;
  seen: SeenRequest[];
  /** How the next requests are answered (default: 200 "ok"). */
  handle(handler: LocalHandler): void;
  close(): Promise<void>;
}

export async function startLocalServer(): Promise<LocalServer> {
  let handler: LocalHandler = (_request, _body, response) => response.end('ok');
  const seen: SeenRequest[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body });
      handler(request, body, response);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    base: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    seen,
    handle: (next) => {
      handler = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A port nothing listens on (a server opened and closed again): connecting is refused. */
export async function closedPort(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${String(port)}`;
}
