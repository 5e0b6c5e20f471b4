/* global process */
// The throughput baseline: a bare Fastify route answering the same callback body, in its own
// process (like the plugin's listener inside Homebridge). Prints "listening <port>" when ready.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/lock-access/lock/:id', async () => ({ ok: true }));
app.post('/lock-access/doorbell/:id', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
