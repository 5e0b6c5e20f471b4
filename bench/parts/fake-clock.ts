// Part 6b: the 30-simulated-day run (bench/fake-clock/main.ts) in its own process, because fake
// timers are global. This wrapper runs it and turns its counts into figures and goals.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import { REPO_ROOT } from '../../test/harness/homebridge.js';
import { round } from '../lib/stats.js';
import { fmt, goal, type PartResult, type RunOptions } from '../lib/types.js';

interface FakeClockCounts {
  days: number; locks: number; doorbells: number;
  presses: number; lockEvents: number; doorEvents: number; duplicates: number; reordered: number;
  deliveries: number; delivered: number; rejected: number; exhausted: number; cancelled: number;
  faults: { fail5xx: number; rateLimit429: number; dropped: number; grantRefused: number; listenerRestarts: number };
  grants: number; apiCalls: number; keepAliveDays: number;
  rings: number; wrongLock: number; wrongDoor: number; wrongReachability: number; wrongBattery: number; tokenState: string; linkProblems: number;
  episodes: { bridgeFlap: number; batteryFlap: number; clockReset: number; clockJump: number; deliveries: number; skewChanges: number };
  unhandled: number; uncaught: number; heapMiB: { day: number; heapMiB: number; rssMiB: number }[];
  realSeconds: number; warnings: string[];
}

export async function runFakeClock(options: RunOptions): Promise<PartResult> {
  const started = performance.now();
  const days = options.quick ? 6 : 30;
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(REPO_ROOT, 'bench', 'fake-clock', 'main.ts'), String(days), '20', '5'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 12 * 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  const line = out.split('\n').find((l) => l.startsWith('FAKE_CLOCK_RESULT '));
  if (!line) throw new Error(`the fake-clock run ended (code ${code}) without a result: ${err.split('\n').slice(-8).join(' / ')}`);
  const c = JSON.parse(line.slice('FAKE_CLOCK_RESULT '.length)) as FakeClockCounts;
  const lost = c.deliveries - c.delivered;
  const heap = c.heapMiB;
  // Compare after the first restart has warmed everything up (day 3) with the end.
  const early = heap.find((h) => h.day >= Math.min(3, days)) ?? heap[0];
  const late = heap.at(-1);
  const growth = early && late ? round(late.heapMiB - early.heapMiB, 1) : Number.NaN;
  const stderrUnhandled = (err.match(/unhandled rejection|uncaught exception/g) ?? []).length;
  options.log(`fake clock: ${days} days in ${c.realSeconds} s real; ${c.deliveries} deliveries, ${c.delivered} delivered; rings ${c.rings}/${c.presses}; grants ${c.grants}; token ${c.tokenState}; heap ${early?.heapMiB} -> ${late?.heapMiB} MiB`);
  const goals = [
    goal(`${days} days: no event lost`, '0', `${lost} of ${c.deliveries} deliveries not delivered`, lost === 0),
    goal(`${days} days: no event applied twice`, 'rings = presses', `${c.rings} rings for ${c.presses} presses`, c.rings === c.presses),
    goal(`${days} days: final states follow the newest event`, '0 wrong', `${c.wrongLock} locks, ${c.wrongDoor} doors, ${c.wrongReachability} reachability, ${c.wrongBattery} batteries wrong`, c.wrongLock === 0 && c.wrongDoor === 0 && c.wrongReachability === 0 && c.wrongBattery === 0),
    goal(`${days} days: no unhandled rejection`, '0', `${c.unhandled + c.uncaught}`, c.unhandled + c.uncaught + stderrUnhandled === 0),
    goal(`${days} days: no token lost`, 'refresh token still valid, no re-link request', `stored refresh token ${c.tokenState}; ${c.linkProblems} re-link messages`, c.tokenState === 'issued' && c.linkProblems === 0),
    goal(`${days} days: memory flat`, '< 10 MiB heap growth', `${fmt(early?.heapMiB ?? Number.NaN)} -> ${fmt(late?.heapMiB ?? Number.NaN)} MiB heap`, Number.isFinite(growth) && growth < 10),
  ];
  return {
    part: 'fakeclock',
    title: `Soak, ${days} simulated days (fake clock)`,
    figures: { ...c, lost, heapGrowthMiB: growth, exitCode: code },
    table: {
      header: ['measure', 'count'],
      rows: [
        ['devices', `${c.locks} locks, ${c.doorbells} doorbells`],
        ['callbacks (presses / lock / door), one per 20 simulated minutes', `${c.presses} / ${c.lockEvents} / ${c.doorEvents}`],
        ['duplicates / reordered (older) sent', `${c.duplicates} / ${c.reordered}`],
        ['deliveries: delivered / rejected / exhausted / cancelled', `${c.delivered} / ${c.rejected} / ${c.exhausted} / ${c.cancelled} of ${c.deliveries}`],
        ['HomeKit rings / presses', `${c.rings} / ${c.presses}`],
        ['wrong final lock / door states', `${c.wrongLock} / ${c.wrongDoor}`],
        ['state episodes: bridge flaps / battery flaps / lock clocks reset / jumped ahead; signature clock moves', `${c.episodes.bridgeFlap} / ${c.episodes.batteryFlap} / ${c.episodes.clockReset} / ${c.episodes.clockJump}; ${c.episodes.skewChanges}`],
        ['wrong final reachability / battery (episode locks)', `${c.wrongReachability} / ${c.wrongBattery}`],
        ['faults: 5xx / 429 / dropped / refresh grants refused / listener restarts', `${c.faults.fail5xx} / ${c.faults.rateLimit429} / ${c.faults.dropped} / ${c.faults.grantRefused} / ${c.faults.listenerRestarts}`],
        ['refresh grants (6-day tokens) / API calls / GET /users/me', `${c.grants} / ${c.apiCalls} / ${c.keepAliveDays}`],
        ['stored refresh token at the end; re-link messages', `${c.tokenState}; ${c.linkProblems}`],
        ['unhandled rejections / uncaught exceptions', `${c.unhandled} / ${c.uncaught}`],
        ['heap after GC, day ~3 / last day (MiB)', `${fmt(early?.heapMiB ?? Number.NaN)} / ${fmt(late?.heapMiB ?? Number.NaN)}`],
        ['real time taken', `${c.realSeconds} s`],
      ],
    },
    goals,
    notes: [
      'The platform runs in process on Homebridge\'s own API object (accessories are real HAP objects, not published), against the simulator, with Date and timers faked by @sinonjs/fake-timers; HTTP and disk stay real. The clock moves one timer at a time and waits for in-flight HTTP calls after each.',
      'Access tokens live 6 days and each API answer carries a token valid one minute longer (the spec\'s "slightly"), so the month has several refresh grants, keep-alives and registration refreshes. Every 5th day the platform is shut down and started again from its accessory cache (listener restart); on days 10 and 20 the token endpoint refuses the next two refresh grants with 503.',
      'On three locks of their own, about one callback in fourteen starts a state episode, its deliveries one after the other: the bridge offline and online a few times, the battery low and fine a few times (the same bodies again and again), the lock clock reset to 2000 (lock_log_timestamp_drifted, then operations stamped in 2000), or jumped a year ahead. Every six hours the signature clock moves to 0 to 30 s behind. At the end the episode locks must show the last reachability (reads fail while offline), battery and lock state.',
      'Not in the month: a grant answer lost after the service rotated the token. The spec makes refresh tokens single-use, so nothing can recover that token; the plugin drops it, never resends it, keeps using its access token and says so (token tests).',
      ...(c.warnings.length > 0 ? [`Last plugin warnings: ${c.warnings.slice(-5).join(' | ')}`] : []),
    ],
    seconds: round((performance.now() - started) / 1000, 1),
  };
}
