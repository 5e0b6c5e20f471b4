// The settings server as the Homebridge UI runs it (homebridge-ui/server.js from dist/, a child
// process spoken to over IPC): a refusal reaches the page as its English sentence with the message
// code and params in the error's data, so the page can word it in the user's language.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

interface Answer {
  requestId: number;
  success: boolean;
  data: unknown;
}

let dir: string;
let server: ChildProcess;
const answers = new Map<number, (answer: Answer) => void>();
let nextId = 1;

function ask(path: string, body: unknown): Promise<Answer> {
  const requestId = nextId++;
  return new Promise((resolve) => {
    answers.set(requestId, resolve);
    server.send({ action: 'request', path, body, requestId });
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'la-server-codes-'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({ bridge: {}, platforms: [{ platform: 'LockAccess' }] }));
  server = fork(join(import.meta.dirname, '../../homebridge-ui/server.js'), [], {
    env: { ...process.env, HOMEBRIDGE_STORAGE_PATH: dir, HOMEBRIDGE_CONFIG_PATH: join(dir, 'config.json') },
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  await new Promise<void>((resolve) => {
    server.on('message', (message: { action: string; payload: Answer }) => {
      if (message.action === 'ready') resolve();
      if (message.action === 'response') answers.get(message.payload.requestId)?.(message.payload);
    });
  });
});

afterAll(async () => {
  server.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

describe('the settings server answers the page with message codes', () => {
  it('a refusal carries its code, params and English sentence; the request path too', async () => {
    expect(await ask('/test-connection', { account: {} })).toMatchObject({
      success: false,
      data: {
        message: 'Enter the API key first.',
        error: { path: '/test-connection', code: 'server.account.missing.apiKey', params: {}, text: 'Enter the API key first.' },
      },
    });
    expect(await ask('/test-event/start', {})).toMatchObject({ success: false, data: { error: { code: 'server.testEvent.chooseLock', params: {} } } });
  });

  it('an address that is not http(s) is named by its own code', async () => {
    const answer = await ask('/oauth/start', { account: { apiKey: 'k', clientId: 'c', clientSecret: 's', baseUrl: 'https://api.example.net', authUrl: 'ftp://auth.example.net' } });
    expect(answer).toMatchObject({ success: false, data: { error: { code: 'server.account.notAddress.authUrl', params: {} } } });
  });
});
