// `npm start`: the plugin in a real Homebridge against the bundled service simulator, no account
// needed. Starts the simulator in this process, writes a Homebridge storage folder
// (.homebridge-demo/) whose config points the plugin at it, runs Homebridge with this repository
// as its plugin, prints the pairing code, plays "a day at the front door" and prints one line per
// event from the plugin's event log. Two accounts of the service run in the one block: the main
// one and "Cabin" (a holiday home), which has a lock of its own and shares the front door. It also starts the real Homebridge UI on 127.0.0.1 (printed,
// with demo credentials), where the plugin's settings page fills in as the day runs. Ctrl-C stops
// everything.
//
// Options: --once (stop after the scripted day), --interval <ms> between steps (default 3000),
// --no-ui (no Homebridge UI), --ui-port <port> (default 8581, another when taken; 0 for any),
// DEMO_UI_LOG=1 (show the UI's own log lines),
// --storage <folder> (default .homebridge-demo/; it is emptied first).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { launchDemoUi, prepareDemoUi, type DemoUi } from './demo-ui.js';
import type { EventLogEntry } from '../src/status/event-entry.js';
import { readEventLog } from '../src/status/event-log.js';
import { Storage } from '../src/storage.js';
import { freePort } from '../test/harness/homebridge.js';
import { demoAccount } from '../test/sim/demo-accounts.js';
import { demoDevices } from '../test/sim/devices.js';
import { startSimulator } from '../test/sim/index.js';
import { simAccountEntry, simPlatformConfig } from '../test/sim/plugin-config.js';
import { ScenarioRun, frontDoorDay } from '../test/sim/scenario.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const HOMEBRIDGE = join(ROOT, 'node_modules', 'homebridge', 'bin', 'homebridge.js');
// Homebridge 2 wants Node 22+: use the Node the project pins (npm start already runs on it).
const PINNED_NODE = join(ROOT, 'node_modules', 'node', 'bin', 'node');
const PIN = '031-45-154';
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

const { values } = parseArgs({
  options: {
    once: { type: 'boolean', default: false },
    interval: { type: 'string', default: '3000' },
    'no-ui': { type: 'boolean', default: false },
    'ui-port': { type: 'string', default: '8581' },
    storage: { type: 'string', default: join(ROOT, '.homebridge-demo') },
  },
  strict: true,
});
const intervalMs = Math.max(200, Number(values.interval) || 3000);
const STORAGE = resolve(values.storage);
const withUi = !values['no-ui'];

const say = (line: string) => {
  process.stdout.write(`${line}\n`);
};

function randomUsername(): string {
  return [...randomBytes(6)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

// The second account: a home of its own with the Cabin Door, and the main account's front door shared with it.
const cabin = demoAccount('cabin', 'Cabin', false);
const home = demoDevices();
const sim = await startSimulator({
  accounts: [cabin.account],
  locks: [...home.locks.map((lock) => ({ ...lock, accounts: ['main', 'cabin'] })), ...cabin.locks],
  doorbells: home.doorbells,
});
const cabinLockId = cabin.locks[0]?.id ?? 'LOCK-CABIN';
// Doorbell video: the static ffmpeg of the devDependency where it exists (linux-x64), else the PATH's.
const BUNDLED_FFMPEG = join(ROOT, 'node_modules', '@ffmpeg-installer', 'linux-x64', 'ffmpeg');
const video = existsSync(BUNDLED_FFMPEG) ? { ffmpegPath: BUNDLED_FFMPEG } : {};
const listenPort = await freePort();
const bridgePort = await freePort();
const lockId = 'LOCK-FRONT-DOOR';
const doorbellId = 'DOORBELL-FRONT';

// A fresh folder each run: the simulator's account (keys, tokens) is new every time.
// Only a folder this demo made (or an empty or new one) is emptied: --storage must never wipe anything else.
const MARKER = '.lock-access-demo';
if (existsSync(STORAGE) && (await readdir(STORAGE)).length > 0 && !existsSync(join(STORAGE, MARKER))) {
  say(`${STORAGE} is not empty and was not made by this demo: choose another --storage folder.`);
  await sim.close();
  process.exit(1);
}
await rm(STORAGE, { recursive: true, force: true });
await mkdir(STORAGE, { recursive: true });
await writeFile(join(STORAGE, MARKER), 'Made by npm start (scripts/demo.ts); emptied on its next run.\n');
await writeFile(join(STORAGE, 'config.json'), JSON.stringify({
  bridge: { name: 'Lock Access Demo', username: randomUsername(), port: bridgePort, pin: PIN },
  accessories: [],
  platforms: [simPlatformConfig(sim, listenPort, {
    refreshToken: sim.issueRefreshToken(),
    locks: [{ id: lockId, doorSensor: true, autoLockSeconds: 5, leftOpenSeconds: 60, leftUnlockedSeconds: 600 }],
    accounts: [simAccountEntry(sim, 'cabin', { refreshToken: sim.issueRefreshToken('cabin') })],
    video,
  })],
}, null, 2));

const uiPort = Number(values['ui-port']);
// --ui-port 0: any free port.
const uiSetup = withUi ? await prepareDemoUi(STORAGE, ROOT, Number.isInteger(uiPort) && uiPort >= 0 && uiPort < 65_536 ? uiPort : 8581) : undefined;

say('Lock Access demo');
say(`  simulator      ${sim.url}  (API ${sim.baseUrl}, OAuth ${sim.authUrl})`);
say(`  Homebridge     storage ${STORAGE}, bridge port ${bridgePort}`);
say(`  webhooks       http://127.0.0.1:${listenPort}/lock-access`);
say(`  accounts       the main one (Front Door, Front Doorbell) and Cabin (cabin: the Cabin Door, and the Front Door shared with it), in one block`);
if (uiSetup) say(`  Homebridge UI  starting on http://127.0.0.1:${uiSetup.port}`);
say('');

// Shared with the signal handlers, hence an object rather than narrowed locals.
const run: { stopping: boolean; quiet: boolean; scenario: ScenarioRun | undefined; eventTimer: NodeJS.Timeout | undefined; ui: DemoUi | undefined } = { stopping: false, quiet: false, scenario: undefined, eventTimer: undefined, ui: undefined };

const node = existsSync(PINNED_NODE) ? PINNED_NODE : process.execPath;
// UIX_SERVICE_MODE: Homebridge leaves the UI's platform block to the UI, which runs on its own.
const child = spawn(node, [HOMEBRIDGE, '-U', STORAGE, '-P', ROOT, '--strict-plugin-resolution', '-I', '-T'], {
  cwd: STORAGE,
  env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', UIX_SERVICE_MODE: '1' },
  stdio: ['ignore', 'pipe', 'pipe'],
});

// Homebridge's start-up (with its QR code and setup code box) is shown as it is; after that only
// the plugin's lines, warnings and errors, so the event lines below stay readable.
let started = false;
const onLine = (raw: string) => {
  const line = raw.replace(ANSI, '').trimEnd();
  if (line === '') return;
  if (!started) {
    say(line);
    if (/is running on port/.test(line)) {
      started = true;
      say('');
      say(`Pair it: in the Home app choose "Add Accessory", scan the QR code above or enter the setup code ${PIN}.`);
      say('(The phone must reach this computer on the local network.)');
      say('');
    }
    return;
  }
  // During the scripted day the event log below says the same in one line per event.
  if (!run.quiet && /\[Lock Access\]|\b(warn|error)\b/i.test(line)) say(`  hb  ${line}`);
};
for (const stream of [child.stdout, child.stderr]) {
  let pending = '';
  stream.setEncoding('utf8').on('data', (chunk: string) => {
    const text = pending + chunk;
    const cut = text.lastIndexOf('\n');
    pending = text.slice(cut + 1);
    for (const line of text.slice(0, cut + 1).split('\n')) onLine(line);
  });
}
const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => { resolveExit(code); }));


async function stop(code: number): Promise<never> {
  if (!run.stopping) {
    run.stopping = true;
    say('\nStopping Homebridge and the simulator…');
    run.scenario?.cancel();
    if (run.eventTimer) clearInterval(run.eventTimer);
    const uiStopped = run.ui?.stop();
    if (child.exitCode === null) child.kill('SIGINT');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
    await uiStopped;
    await sim.close();
    say('Stopped.');
  }
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
void exited.then((code) => {
  if (!run.stopping) {
    say(`Homebridge stopped on its own (exit code ${code ?? 'none'}).`);
    void stop(1);
  }
});

// The Homebridge UI starts beside Homebridge; its address is printed before the day begins.
const uiReady = uiSetup
  ? launchDemoUi({ storage: STORAGE, root: ROOT, node, onLine: (line) => { if (process.env.DEMO_UI_LOG === '1' || /\berror\b/i.test(line)) say(`  ui  ${line}`); } }, uiSetup).then(
    (ui) => { run.ui = ui; return ui; },
    (error: unknown) => { say(`The Homebridge UI did not start (${error instanceof Error ? error.message : String(error)}); the demo goes on without it.`); return undefined; },
  )
  : Promise.resolve(undefined);

// One readable line per event, from the event log the plugin writes for the settings UI.
const storage = Storage.under(STORAGE);
const seen = new Set<string>();
/** Event log lines printed for events of the scripted day (from when it starts). */
const day = { startedAt: Number.POSITIVE_INFINITY, printed: 0 };
const entryKey = (e: EventLogEntry) => `${e.deviceKind}:${e.deviceId}:${e.at}:${e.kind}:${e.text}`;
run.eventTimer = setInterval(() => {
  void readEventLog(storage).then((entries) => {
    for (const entry of [...entries].reverse()) {
      const key = entryKey(entry);
      if (seen.has(key)) continue;
      seen.add(key);
      if (entry.at >= day.startedAt) day.printed += 1;
      const time = new Date(entry.at).toLocaleTimeString();
      say(`  ${time}  ${entry.deviceName.padEnd(16)} ${entry.text}${entry.dvrId ? '  (recording in the settings UI)' : ''}`);
    }
  });
}, 500);

// Wait for the plugin to register its webhooks, then play the day.
const deadline = Date.now() + 120_000;
// The main account: one lock, one doorbell and its user registration; Cabin: its own lock and user
// registration (the shared front door is registered once, by its owner, the main account).
while (sim.registrations().length < 5) {
  if (run.stopping) await new Promise(() => undefined);
  if (Date.now() > deadline) {
    say('The plugin did not register its webhooks within 2 minutes; see the Homebridge lines above.');
    await stop(1);
  }
  await new Promise((resolveWait) => setTimeout(resolveWait, 250));
}
const ui = await uiReady;
if (ui) {
  say('');
  say(`Homebridge UI: ${ui.url}  (user ${ui.username}, password ${ui.password})`);
  say('  Open Plugins, then on "Lock Access" the ⋮ menu and "Plugin Config": the plugin\'s settings page shows');
  say('  the link, the webhook registrations, the devices and the event log as the day below runs;');
  say('  "Play recording" on the doorbell press plays its video. In its Support card, "Send a test event"');
  say('  proves the whole way from the service; "Download diagnostics" saves the bug-report file.');
  say('');
}
const registered = (account: string) => sim.registrations().filter((r) => r.account === account).map((r) => r.kind).join(', ');
say(`Webhooks registered (main account: ${registered('main')}; Cabin: ${registered('cabin')}). A day at the front door, one step every ${intervalMs / 1000} s:`);
const steps = frontDoorDay({ lockId, doorbellId, dvrId: randomBytes(16).toString('hex') });
const scenario = new ScenarioRun(steps, (event, options) => sim.fire(event, options), sim.clock);
day.startedAt = Date.now() - 1000;
run.scenario = scenario;
run.quiet = true;
await scenario.start(intervalMs, (report) => {
  say(`▶ ${report.step.description}`);
});
// Meanwhile at the cabin: Cabin's callback comes on its own path, signed with its own key.
say('▶ at the cabin, Casey unlocks the Cabin Door with the app (the Cabin account)');
await sim.fire('unlock', { lockId: cabinLockId, by: 'app', account: 'cabin' });
// The plugin writes its event log after a quiet spell, at most 10 s late: wait for the day's lines.
for (const until = Date.now() + 15_000; day.printed < steps.length + 1 && Date.now() < until;) {
  await new Promise((resolveWait) => setTimeout(resolveWait, 250));
}
run.quiet = false;
if (values.once) await stop(0);
say('');
say('The scripted day is over. Homebridge keeps running: pair it and try the lock from the Home app.');
say(`Doorbell video (${video.ffmpegPath === undefined ? 'ffmpeg from the PATH, if there is one' : 'the bundled ffmpeg'}): open the doorbell's camera in the Home app within the hour`);
say('  and it plays the recording of the press from its start, then holds its last frame (the log says "the camera view plays the recording").');
say(`More events: curl -X POST ${sim.url}/_sim/fire -H 'content-type: application/json' -d '{"event":"doorbell-press","doorbellId":"${doorbellId}"}'`);
say(`  at the cabin: curl -X POST ${sim.url}/_sim/fire -H 'content-type: application/json' -d '{"event":"lock","lockId":"${cabinLockId}","account":"cabin"}'`);
say(`See a test event fail as with a stopped tunnel: curl -X POST ${sim.url}/_sim/faults -H 'content-type: application/json' -d '{"forwarding":false}'`);
say(`  ("forwarding":true brings it back.)`);
say('Press Ctrl-C to stop.');
