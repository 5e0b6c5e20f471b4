// The body of a request must arrive within a set time of its headers. Node's own requestTimeout
// counts from the start of the request, so quick headers would leave a slow body the sum of both
// times; a timer per request, started when the headers are in, holds the body to its own time.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** What Node itself answers when the headers do not arrive in time. */
const REQUEST_TIMEOUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/** Cuts off, with 408, a request whose body is not complete `bodyTimeoutMs` after its headers. */
export function limitBodyTime(server: Pick<Server, 'on'>, bodyTimeoutMs: number): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.complete) return;
    const timer = setTimeout(() => {
      if (request.complete) return;
      const socket = request.socket;
      // An answer already under way (an unknown path answered before its body) is not followed by a second one.
      if (response.headersSent || !socket.writable) {
        socket.destroy();
        return;
      }
      socket.end(REQUEST_TIMEOUT, () => socket.destroy());
    }, bodyTimeoutMs);
    // Idle sockets must not keep Homebridge from exiting.
    timer.unref();
    response.once('close', () => {
      clearTimeout(timer);
    });
  });
}
