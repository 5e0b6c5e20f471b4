// The body of a request must arrive within a set time of its headers. Node's own requestTimeout
// counts from the start of the request, so quick headers would leave a slow body the sum of both
// times; a timer, started when the headers are in, holds a slow body to its own time.
//
// Almost every body arrives in the same packet as its headers: Node has read it by the time the
// packet is handled. So the requests that came in are looked at once after that (one check for all
// that arrived together), and only a body still missing then gets a timer of its own.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** What Node itself answers when the headers do not arrive in time. */
const REQUEST_TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/** Cuts off, with 408, a request whose body is not complete `bodyTimeoutMs` after its headers. */
export function limitBodyTime(server: Pick<Server, 'on'>, bodyTimeoutMs: number): void {
  let arrived: ServerResponse[] = [];
  // When the first of them arrived: the others' time is counted from it, a moment early at most.
  let arrivedAt = 0;
  const look = (): void => {
    const batch = arrived;
    arrived = [];
    const left = bodyTimeoutMs - (Date.now() - arrivedAt);
    for (const response of batch) if (!response.req.complete) holdToTime(response, left);
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.complete) return;
    if (arrived.length === 0) {
      arrivedAt = Date.now();
      setImmediate(look);
    }
    arrived.push(response);
  });
}

/** The body is still missing: cut the request off when its time is over. */
function holdToTime(response: ServerResponse, leftMs: number): void {
  const request = response.req;
  const timer = setTimeout(() => {
    if (request.complete) return;
    const socket = request.socket;
    // An answer already under way (an unknown path answered before its body) is not followed by a second one.
    if (response.headersSent || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(REQUEST_TIMEOUT, () => socket.destroy());
  }, Math.max(0, leftMs));
  // Idle sockets must not keep Homebridge from exiting.
  timer.unref();
  response.once('close', () => {
    clearTimeout(timer);
  });
}
