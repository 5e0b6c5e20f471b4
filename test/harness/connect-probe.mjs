// Loaded into a Homebridge process with `node --import` by the plugin checks: records every
// outbound TCP connection and UDP datagram the process makes (host:port, one a line) in the file
// named by LOCK_ACCESS_CONNECT_LOG, so a test can prove the plugin talks to nothing but the
// service it was configured with (no analytics, no update checks).
import dgram from 'node:dgram';
import { appendFileSync } from 'node:fs';
import net from 'node:net';
import process from 'node:process';

const file = process.env.LOCK_ACCESS_CONNECT_LOG;

function record(kind, host, port) {
  try {
    appendFileSync(file, `${kind} ${String(host ?? 'localhost')}:${String(port)}\n`);
  } catch {
    // A probe must never change what it watches.
  }
}

if (file) {
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function probedConnect(...args) {
    // net.connect() hands over its normalised arguments as an array; a direct call passes them as is.
    const first = Array.isArray(args[0]) ? args[0][0] : args[0];
    if (first !== null && typeof first === 'object') {
      // A string path is a local socket (IPC), not a network connection; http passes path: null.
      if (typeof first.path !== 'string') record('tcp', first.host ?? first.hostname, first.port);
    } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
      record('tcp', typeof args[1] === 'string' ? args[1] : undefined, first);
    }
    return connect.apply(this, args);
  };

  const send = dgram.Socket.prototype.send;
  dgram.Socket.prototype.send = function probedSend(...args) {
    // send(msg, [offset, length,] port, address, callback)
    const numbers = args.slice(1).filter((a) => typeof a === 'number');
    const port = numbers.length >= 3 ? numbers[2] : numbers[0];
    const address = args.slice(1).find((a) => typeof a === 'string');
    if (port !== undefined) record('udp', address, port);
    return send.apply(this, args);
  };
}
