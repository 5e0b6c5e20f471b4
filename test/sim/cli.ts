// `npm run sim`: runs the simulator on its own with a demo account.
// `npm run sim -- --json --port N` prints exactly one JSON line once listening (a contract for scripts).
import { parseArgs } from 'node:util';
import { demoDevices } from './devices.js';
import { startSimulator } from './index.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    latency: { type: 'string', default: '0' },
    locks: { type: 'string', default: '1' },
    doorbells: { type: 'string', default: '1' },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

function count(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`--${name} must be an integer >= ${min}\n`);
    process.exit(2);
  }
  return n;
}

if (values.help) {
  process.stdout.write(`Lock Access service simulator
  --port N        listen port (default 8590; 0 = any free port)
  --host H        listen address (default 127.0.0.1)
  --latency MS    added latency on API and token endpoint
  --locks N       demo locks (default 1: "Front Door" with door sensor and keypad)
  --doorbells N   demo doorbells (default 1: "Front Doorbell")
  --json          print one JSON line {baseUrl,authUrl,apiKey,clientId,clientSecret,refreshToken} and nothing else
`);
  process.exit(0);
}

const devices = demoDevices(count('locks', values.locks, 0), count('doorbells', values.doorbells, 0));
const sim = await startSimulator({
  host: values.host,
  port: count('port', values.port ?? '8590', 0),
  latencyMs: count('latency', values.latency, 0),
  locks: devices.locks,
  doorbells: devices.doorbells,
});

const { apiKey, clientId, clientSecret, refreshToken } = sim.account;
if (values.json) {
  process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, authUrl: sim.authUrl, apiKey, clientId, clientSecret, refreshToken })}\n`);
} else {
  process.stdout.write(`Lock Access service simulator listening on ${sim.url}

  baseUrl       ${sim.baseUrl}
  authUrl       ${sim.authUrl}
  apiKey        ${apiKey}
  clientId      ${clientId}
  clientSecret  ${clientSecret}
  refreshToken  ${refreshToken}
  (more refresh tokens: restart, or sign in through ${sim.authUrl}/authorization)

Devices: ${[...devices.locks.map((l) => `lock ${l.id} "${l.name ?? ''}"`), ...devices.doorbells.map((d) => `doorbell ${d.id} "${d.name ?? ''}"`)].join(', ') || 'none'}

Control:
  curl -s ${sim.url}/_sim/state
  curl -s -X POST ${sim.url}/_sim/fire -H 'content-type: application/json' -d '{"event":"unlock","by":"keypad"}'
  curl -s -X POST ${sim.url}/_sim/scenario/front-door -H 'content-type: application/json' -d '{"intervalMs":3000}'
  curl -s -X POST ${sim.url}/_sim/faults -H 'content-type: application/json' -d '{"failNext":{"n":2,"status":503}}'
Events: ${sim.eventNames.join(', ')}
`);
}

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  sim.close().then(() => process.exit(0), () => process.exit(1));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
