import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../harness/until.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let child: ChildProcessWithoutNullStreams | undefined;

function start(args: string[]): { child: ChildProcessWithoutNullStreams; stdout: () => string; firstLine: Promise<string> } {
  // One process (node with the tsx loader), so a kill in afterEach leaves no orphan behind.
  const proc = spawn(process.execPath, ['--import', 'tsx', 'test/sim/cli.ts', ...args], { cwd: root, stdio: 'pipe' });
  child = proc;
  let out = '';
  const firstLine = new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const newline = out.indexOf('\n');
      if (newline >= 0) resolve(out.slice(0, newline));
    });
    proc.once('exit', (code) => { reject(new Error(`exited ${String(code)} before printing`)); });
  });
  return { child: proc, stdout: () => out, firstLine };
}

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

// Starting tsx in a child process is slow on a busy machine: allow a minute per test.
describe('README The service simulator: npm run sim -- --json --port N (contract for scripts)', { timeout: 60_000 }, () => {
  it('prints exactly one JSON line {baseUrl, authUrl, apiKey, clientId, clientSecret, refreshToken} once listening, nothing else; SIGTERM closes it cleanly', async () => {
    const run = start(['--json', '--port', '0']);
    const line = await run.firstLine;
    const info = JSON.parse(line) as Record<string, string>;
    expect(Object.keys(info)).toEqual(['baseUrl', 'authUrl', 'apiKey', 'clientId', 'clientSecret', 'refreshToken']);
    expect(info.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);
    // Listening already: the ready account works.
    const grant = await fetch(`${info.authUrl ?? ''}/access_token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: info.clientId ?? '', client_secret: info.clientSecret ?? '', refresh_token: info.refreshToken ?? '' }),
    });
    expect(grant.status).toBe(200);
    const { access_token: accessToken } = await grant.json() as { access_token: string };
    const locks = await fetch(`${info.baseUrl ?? ''}/users/locks/mine`, { headers: { 'x-svc-api-key': info.apiKey ?? '', 'x-svc-access-token': accessToken } });
    expect(Object.values(await locks.json() as Record<string, { LockName: string }>).map((l) => l.LockName)).toEqual(['Front Door']);
    const bells = await fetch(`${info.baseUrl ?? ''}/users/doorbells/mine`, { headers: { 'x-svc-api-key': info.apiKey ?? '', 'x-svc-access-token': accessToken } });
    expect(Object.values(await bells.json() as Record<string, { name: string }>).map((d) => d.name)).toEqual(['Front Doorbell']);
    run.child.kill('SIGTERM');
    const [code] = await once(run.child, 'exit') as [number | null];
    expect(code).toBe(0);
    expect(run.stdout()).toBe(`${line}\n`);
  });

  it('without --json it prints its URLs and the ready account; --locks N --doorbells N set the demo devices; SIGINT closes it', async () => {
    const run = start(['--port', '0', '--locks', '3', '--doorbells', '0']);
    await run.firstLine;
    await until(() => run.stdout().includes('Events:'), 'the CLI to print its events');
    const baseUrl = /baseUrl\s+(http:\/\/127\.0\.0\.1:\d+)\/api/.exec(run.stdout())?.[1];
    expect(baseUrl).toBeDefined();
    for (const word of ['authUrl', 'apiKey', 'clientId', 'clientSecret', 'refreshToken', '/_sim/fire', 'doorbell-press']) expect(run.stdout()).toContain(word);
    const state = await (await fetch(`${baseUrl ?? ''}/_sim/state`)).json() as { locks: unknown[]; doorbells: unknown[] };
    expect(state.locks).toHaveLength(3);
    expect(state.doorbells).toHaveLength(0);
    run.child.kill('SIGINT');
    const [code] = await once(run.child, 'exit') as [number | null];
    expect(code).toBe(0);
  });

  it('--account cabin=Cabin adds an account with its own home; --share-lock gives it the front door too; --json lists it under "accounts"', async () => {
    const run = start(['--json', '--port', '0', '--account', 'cabin=Cabin', '--share-lock']);
    const info = JSON.parse(await run.firstLine) as { baseUrl: string; authUrl: string; apiKey: string; accounts: Array<Record<string, string>> };
    expect(info.accounts.map((a) => [a.id, a.name])).toEqual([['cabin', 'Cabin']]);
    const cabin = info.accounts[0] ?? {};
    expect(cabin.apiKey).not.toBe(info.apiKey);
    const grant = await fetch(`${info.authUrl}/access_token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', client_id: cabin.clientId ?? '', client_secret: cabin.clientSecret ?? '', refresh_token: cabin.refreshToken ?? '' }),
    });
    const { access_token: accessToken } = await grant.json() as { access_token: string };
    const locks = await fetch(`${info.baseUrl}/users/locks/mine`, { headers: { 'x-svc-api-key': cabin.apiKey ?? '', 'x-svc-access-token': accessToken } });
    expect(Object.values(await locks.json() as Record<string, { LockName: string }>).map((l) => l.LockName)).toEqual(['Front Door', 'Cabin Door']);
    run.child.kill('SIGTERM');
    await once(run.child, 'exit');
  });
});
