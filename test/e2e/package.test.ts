// the published package as users get it. `npm pack`, the tarball installed with
// --omit=dev into an empty folder (no devDependency can help it there), and a real Homebridge from
// the registry running it against the simulator, on each Node and Homebridge of the support matrix:
// the plugin loads, links, registers its webhooks, and a paired HomeKit controller sees a lock event.
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import hap from '@homebridge/hap-nodejs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { characteristicId, HapController } from '../harness/hap.js';
import { freePort, STARTED, startHomebridge, type RunningHomebridge } from '../harness/homebridge.js';
import { NODE_20, NODE_22, packAndInstall, pinnedNode, provisionHomebridge, provisionNode, type PackedPlugin } from '../harness/package-install.js';
import { startSimulator } from '../sim/index.js';
import { simPlatformConfig } from '../sim/plugin-config.js';

const { Service: S, Characteristic: C } = hap;

let packedPlugin: PackedPlugin | undefined;

function packed(): PackedPlugin {
  if (!packedPlugin) throw new Error('the package was not packed and installed');
  return packedPlugin;
}
const runtimes = new Map<string, { node: string; homebridge: string; homebridgeVersion: string }>();

interface MatrixCase {
  name: string;
  node: () => Promise<string>;
  nodeMajor: string;
  flavour: 'homebridge' | 'homebridge1';
  homebridgeMajor: string;
}

const MATRIX: MatrixCase[] = [
  { name: 'Homebridge 2.x on Node 24', node: () => Promise.resolve(pinnedNode()), nodeMajor: '24', flavour: 'homebridge', homebridgeMajor: '2' },
  { name: 'Homebridge 2.x on Node 22', node: () => provisionNode(NODE_22), nodeMajor: '22', flavour: 'homebridge', homebridgeMajor: '2' },
  { name: 'Homebridge 1.x on Node 20.18+', node: () => provisionNode(NODE_20), nodeMajor: '20', flavour: 'homebridge1', homebridgeMajor: '1' },
];

beforeAll(async () => {
  // One pack and install per run, shared by every case. Packing, installing and provisioning Node
  // and Homebridge wait mostly on npm and the registry, so they all run at once.
  const [plugin] = await Promise.all([
    packAndInstall(),
    ...MATRIX.map(async (entry) => {
      const [node, homebridge] = await Promise.all([entry.node(), provisionHomebridge(entry.flavour)]);
      runtimes.set(entry.name, { node, homebridge: homebridge.bin, homebridgeVersion: homebridge.version });
    }),
  ]);
  packedPlugin = plugin;
}, 600_000);

afterAll(async () => {
  if (packedPlugin) await rm(packedPlugin.root, { recursive: true, force: true });
});

describe('the tarball holds what the plugin needs and nothing else', () => {
  it('ships the built plugin, the settings UI with its player, the schema and the docs', () => {
    for (const file of ['package.json', 'dist/index.js', 'dist/settings-ui/server-parts.js', 'dist/assets/placeholder.jpg', 'config.schema.json', 'homebridge-ui/server.js', 'homebridge-ui/public/index.html', 'homebridge-ui/public/js/main.js', 'homebridge-ui/public/vendor/hls.light.min.js', 'README.md', 'LICENSE']) {
      expect(packed().files, file).toContain(file);
    }
  });

  it('the module Homebridge loads and the settings server\'s part are one file each: they import only packages and Node\'s own modules', async () => {
    for (const [file, a] of [['dist/index.js', 'fastify'], ['dist/settings-ui/server-parts.js', 'write-file-atomic']] as const) {
      const code = await readFile(join(packed().packageDir, file), 'utf8');
      const specifiers = [...code.matchAll(/(?:^import\s[^;]*?from\s*|^import\s*|\bimport\()\s*["']([^"']+)["']/gm)].map((match) => match[1]);
      expect(specifiers, file).toContain(a);
      expect(specifiers.filter((specifier) => specifier?.startsWith('.')), file).toEqual([]);
    }
    // Nothing else of dist/ is shipped: the two files hold all of the plugin's code.
    expect(packed().files.filter((name) => name.startsWith('dist/') && name.endsWith('.js')).sort()).toEqual(['dist/index.js', 'dist/settings-ui/server-parts.js']);
  });

  it('holds no tests, sources, source maps, benchmarks, scripts or local state', () => {
    const unwanted = packed().files.filter((file) => /^(test|src|bench|scripts|docs|\.ci|\.homebridge-demo|test-artifacts|coverage|node_modules)\//.test(file) || /\.(ts|map)$/.test(file) || /(^|\/)\.[^/]+$/.test(file));
    expect(unwanted).toEqual([]);
  });

  it('holds no secrets: no key, token or credential files, no private keys in any file', async () => {
    // Code may be named for secrets (dist/cloud/webhook-secret.js); data files may not.
    const dataFiles = packed().files.filter((file) => !/\.(js|md)$/.test(file));
    expect(dataFiles.filter((file) => /(tokens|secret|credential|\.pem|\.key|\.p12|\.env|auth\.json|(^|\/)config\.json$)/i.test(file))).toEqual([]);
    for (const file of packed().files) {
      const text = await readFile(join(packed().packageDir, file), 'utf8');
      expect(text, file).not.toMatch(/-----BEGIN [A-Z ]*PRIVATE KEY-----/);
    }
  });

  it('declares homebridge as a devDependency only, and no install scripts', async () => {
    const pkg = JSON.parse(await readFile(join(packed().packageDir, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(pkg.dependencies?.homebridge).toBeUndefined();
    expect(pkg.peerDependencies?.homebridge).toBeUndefined();
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts?.[script], script).toBeUndefined();
  });

  it('installs with --omit=dev to its runtime dependencies alone: no Homebridge, HAP-NodeJS or test tool', () => {
    expect(packed().installed).toContain('homebridge-lock-access');
    for (const name of ['homebridge', '@homebridge/hap-nodejs', 'vitest', 'typescript', 'hls.js', 'playwright-core', 'node']) expect(packed().installed, name).not.toContain(name);
    // The settings UI's server only needs what the install brought.
    expect(existsSync(join(packed().pluginPath, '@homebridge', 'plugin-ui-utils'))).toBe(true);
  });
});

// The cases run side by side: each has its own simulator, Homebridge, ports and controller, and
// most of a case is waiting for Homebridge to start and answer. Concurrent tests take `expect` from
// their context (expect.poll needs to know its test).
describe.concurrent.each(MATRIX)('the installed tarball in $name', (entry) => {
  it('the settings page\'s server finds everything it imports in the install (the Homebridge UI starts it from there)', async ({ expect }) => {
    const runtime = runtimes.get(entry.name);
    if (!runtime) throw new Error(`${entry.name} was not provisioned`);
    const probe = join(packed().packageDir, 'homebridge-ui', `probe-${entry.nodeMajor}.mjs`);
    // The imports of homebridge-ui/server.js, resolved from beside it; starting the server itself needs the UI's IPC.
    const server = await readFile(join(packed().packageDir, 'homebridge-ui', 'server.js'), 'utf8');
    const specifiers = [...server.matchAll(/(?:from|import\()\s*'([^']+)'/g)].map((m) => m[1] ?? '');
    expect(specifiers).toContain('@homebridge/plugin-ui-utils');
    await writeFile(probe, `${specifiers.map((s) => `await import(${JSON.stringify(s)});`).join('\n')}\nconsole.log('imports ok');\n`);
    const result = spawnSync(runtime.node, [probe], { encoding: 'utf8', timeout: 30_000 });
    expect(`${result.stdout}${result.stderr}`).toContain('imports ok');
  }, 60_000);

  it('loads, links, registers, and a paired HomeKit controller sees a lock event', async ({ expect }) => {
    const runtime = runtimes.get(entry.name);
    if (!runtime) throw new Error(`${entry.name} was not provisioned`);
    expect(spawnSync(runtime.node, ['--version'], { encoding: 'utf8' }).stdout).toMatch(new RegExp(`^v${entry.nodeMajor}\\.`));
    expect(runtime.homebridgeVersion.startsWith(`${entry.homebridgeMajor}.`)).toBe(true);

    const sim = await startSimulator({ locks: [{ id: 'LOCK-1', name: 'Front Door', lockState: 'locked' }] });
    let hb: RunningHomebridge | undefined;
    let controller: HapController | undefined;
    try {
      const listenPort = await freePort();
      hb = await startHomebridge({
        node: runtime.node,
        homebridgeBin: runtime.homebridge,
        pluginPath: packed().pluginPath,
        platforms: [simPlatformConfig(sim, listenPort, { locks: [{ id: 'LOCK-1', name: 'Front Door' }], refreshStateOnStart: false })],
      });
      const loaded = await hb.waitForLog(/homebridge-lock-access/i);
      expect(loaded).not.toMatch(/error|failed/i);
      await hb.waitForLog(STARTED);
      // Linked: the seed refresh token was spent on a grant and the rotated tokens are on disk.
      await hb.waitForLog(/access token renewed/);
      expect(sim.refreshTokenState(sim.account.refreshToken)).not.toBe('issued');
      expect(existsSync(join(hb.storagePath, 'lock-access', 'tokens.json'))).toBe(true);
      // Registered: the lock and the user.
      await expect.poll(() => sim.registrations().map((r) => `${r.kind}:${r.scope}`).sort(), { timeout: 30_000, interval: 200 }).toEqual(['lock:LOCK-1', `user:${sim.account.userId}`]);
      await hb.waitForLog(/is running on port/);

      const paired = await HapController.pair({ port: hb.bridgePort, username: hb.username, pin: hb.pin });
      controller = paired;
      await expect.poll(async () => (await paired.accessories().catch(() => [])).some((a) => a.name === 'Front Door'), { timeout: 20_000, interval: 200 }).toBe(true);
      const front = await paired.accessory('Front Door');
      const current = characteristicId(front, S.LockMechanism.UUID, C.LockCurrentState.UUID);
      const subscription = await paired.subscribe([current]);
      const results = await sim.fire('unlock', { lockId: 'LOCK-1', by: 'keypad' });
      expect(results.map((r) => r.status)).toEqual([200]);
      await subscription.waitFor((event) => event.id === current && event.value === 0, 'LockCurrentState UNSECURED (0)', 15_000);
      await hb.waitForLog(/Front Door: Unlocked/);

      const end = await hb.stop(12_000);
      expect(end.signal).not.toBe('SIGKILL');
      const text = hb.logs.join('\n');
      expect(text).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)|Unhandled|TypeError|ReferenceError|SyntaxError/);
      for (const secret of [sim.account.apiKey, sim.account.clientSecret, sim.account.refreshToken]) expect(text).not.toContain(secret);
    } finally {
      await controller?.close().catch(() => undefined);
      await hb?.stop();
      await hb?.cleanup();
      await sim.close();
    }
  }, 120_000);
});
