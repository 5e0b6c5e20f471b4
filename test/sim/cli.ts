// `npm run sim`: runs the simulator on its own with a demo account.
// `npm run sim -- --json --port N` prints exactly one JSON line once listening (a contract for scripts).
// `--account cabin=Cabin` (repeatable) adds an account with a home of its own.
import { parseArgs } from 'node:util';
import { demoAccount, parseAccountSpec } from './demo-accounts.js';
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
    account: { type: 'string', multiple: true, default: [] },
    shared: { type: 'boolean', default: false },
    'share-lock': { type: 'boolean', default: false },
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
  --account ID=NAME  another account (repeatable), with its own user, key, client, lock and doorbell
  --shared        the other accounts use the main account's API key and client (one integration)
  --share-lock    the main account's first lock is held by every other account too
  --json          print one JSON line {baseUrl,authUrl,apiKey,clientId,clientSecret,refreshToken} and nothing else
                  (with --account also "accounts": [{id,name,apiKey,clientId,clientSecret,refreshToken,...}])
`);
  process.exit(0);
}

const devices = demoDevices(count('locks', values.locks, 0), count('doorbells', values.doorbells, 0));
const extras = values.account.map((spec) => {
  const { id, name } = parseAccountSpec(spec);
  return demoAccount(id, name, values.shared);
});
const extraIds = extras.map((e) => e.account.id);
const mainLocks = devices.locks.map((l, i) => (i === 0 && values['share-lock'] ? { ...l, accounts: ['main', ...extraIds] } : l));
let sim;
try {
  sim = await startSimulator({
    host: values.host,
    port: count('port', values.port ?? '8590', 0),
    latencyMs: count('latency', values.latency, 0),
    accounts: extras.map((e) => e.account),
    locks: [...mainLocks, ...extras.flatMap((e) => e.locks)],
    doorbells: [...devices.doorbells, ...extras.flatMap((e) => e.doorbells)],
  });
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
const others = sim.accounts().slice(1);

const { apiKey, clientId, clientSecret, refreshToken } = sim.account;
if (values.json) {
  const accounts = others.length > 0 ? { accounts: others } : {};
  process.stdout.write(`${JSON.stringify({ baseUrl: sim.baseUrl, authUrl: sim.authUrl, apiKey, clientId, clientSecret, refreshToken, ...accounts })}\n`);
} else {
  process.stdout.write(`Lock Access service simulator listening on ${sim.url}

  baseUrl       ${sim.baseUrl}
  authUrl       ${sim.authUrl}
  apiKey        ${apiKey}
  clientId      ${clientId}
  clientSecret  ${clientSecret}
  refreshToken  ${refreshToken}
  (more refresh tokens: restart, or sign in through ${sim.authUrl}/authorization)

${others.map((a) => `Account "${a.name}" (id ${a.id})${a.apiKey === apiKey ? ', same API key and client' : ''}
  apiKey        ${a.apiKey}
  clientId      ${a.clientId}
  clientSecret  ${a.clientSecret}
  refreshToken  ${a.refreshToken}
`).join('\n')}
Devices: ${[...devices.locks.map((l) => `lock ${l.id} "${l.name ?? ''}"`), ...devices.doorbells.map((d) => `doorbell ${d.id} "${d.name ?? ''}"`), ...extras.flatMap((e) => [...e.locks, ...e.doorbells].map((d) => `${e.account.id}: ${d.id} "${d.name ?? ''}"`))].join(', ') || 'none'}

Control:
  curl -s ${sim.url}/_sim/state
  curl -s -X POST ${sim.url}/_sim/fire -H 'content-type: application/json' -d '{"event":"unlock","by":"keypad"}'
  curl -s -X POST ${sim.url}/_sim/scenario/front-door -H 'content-type: application/json' -d '{"intervalMs":3000}'
  curl -s -X POST ${sim.url}/_sim/faults -H 'content-type: application/json' -d '{"failNext":{"n":2,"status":503}}'
${others.map((a) => `  curl -s -X POST ${sim.url}/_sim/fire -H 'content-type: application/json' -d '{"event":"unlock","lockId":"LOCK-${a.id.toUpperCase()}"}'\n`).join('')}Events: ${sim.eventNames.join(', ')}
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
