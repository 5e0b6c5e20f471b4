// The published package as users get it: `npm pack`, the tarball installed with --omit=dev into an
// empty folder, and the Node binaries and Homebridge versions of the support matrix from the npm
// registry. Node and Homebridge are cached between runs in the user's cache folder, outside the
// clone, so that `npm ci` and a new clone keep them (installing them costs about a minute of CPU);
// the tarball is packed and installed afresh every run, since it is what is under test.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

import { REPO_ROOT } from './homebridge.js';

/** `$XDG_CACHE_HOME/homebridge-lock-access/package-matrix`, or under `~/.cache` (each install named by its version). */
export const PACKAGE_CACHE = join(userCacheFolder(), 'homebridge-lock-access', 'package-matrix');

function userCacheFolder(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
}

/** The matrix's Node versions; Node 24 is the one the project pins (node_modules/node). */
export const NODE_22 = '22.23.3';
export const NODE_20 = '20.20.2';

interface NpmResult {
  code: number | null;
  output: string;
}

/**
 * Runs npm with the npm_* variables of an enclosing `npm test` removed: they carry that run's
 * prefix and options, and a nested install would otherwise land in the repository.
 */
export function npm(args: string[], cwd: string, timeoutMs = 300_000): Promise<NpmResult> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key)) env[key] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn('npm', [...args, '--no-audit', '--no-fund', '--no-update-notifier'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`npm could not be started (${error.message}): is npm on the PATH?`, { cause: error }));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function registryTrouble(what: string, output: string): Error {
  const unreachable = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|network|fetch failed/i.test(output);
  const lines = output.split('\n').filter((line) => line.trim() !== '' && !/Unknown user config/.test(line)).slice(-15).join('\n');
  const why = unreachable
    ? `the npm registry cannot be reached from this machine; the package matrix needs it once, then runs from ${PACKAGE_CACHE}`
    : 'npm failed';
  return new Error(`Could not install ${what}: ${why}.\n${lines}`);
}

/** Installs under way in this process, by name: two cases asking for the same one share it. */
const installing = new Map<string, Promise<string>>();

/**
 * Installs `specs` into `<PACKAGE_CACHE>/<name>` once: into a temp folder first, then renamed, so a
 * run that stops half-way (or a second run at the same time) never leaves a broken cache behind.
 */
function cachedInstall(name: string, specs: string[], packageJson: Record<string, unknown> = {}): Promise<string> {
  let install = installing.get(name);
  if (install === undefined) {
    install = installOnce(name, specs, packageJson);
    installing.set(name, install);
    // A failed install is tried again by the next caller.
    install.catch(() => installing.delete(name));
  }
  return install;
}

async function installOnce(name: string, specs: string[], packageJson: Record<string, unknown>): Promise<string> {
  const dir = join(PACKAGE_CACHE, name);
  if (existsSync(join(dir, '.complete'))) return dir;
  await mkdir(PACKAGE_CACHE, { recursive: true });
  const staging = await mkdtemp(join(PACKAGE_CACHE, `.${name}-`));
  try {
    await writeFile(join(staging, 'package.json'), JSON.stringify({ name: `lock-access-cache-${name}`, private: true, ...packageJson }, null, 2));
    const result = await npm(['install', '--no-save', ...specs], staging);
    if (result.code !== 0) throw registryTrouble(specs.join(' '), result.output);
    await writeFile(join(staging, '.complete'), new Date().toISOString());
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir).catch((error: unknown) => {
      // Another run finished the same install first: use theirs.
      if (!existsSync(join(dir, '.complete'))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return dir;
}

/** A Node binary from the registry's `node` package (which installs it by a preinstall script). */
export async function provisionNode(version: string): Promise<string> {
  if (process.version === `v${version}`) return process.execPath;
  const dir = await cachedInstall(`node-${version}`, [`node@${version}`]);
  const bin = join(dir, 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(bin)) throw new Error(`node@${version} installed without its binary (${bin}): its preinstall script did not run`);
  return bin;
}

/** The Node this project pins (npm scripts run on it): node_modules/node. */
export function pinnedNode(): string {
  const bin = join(REPO_ROOT, 'node_modules', 'node', 'bin', 'node');
  return existsSync(bin) ? bin : process.execPath;
}

/** The version of a package the repository has installed (homebridge, or homebridge1 for 1.x). */
async function installedVersion(folder: string): Promise<string> {
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'node_modules', folder, 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Homebridge from the registry, at the version the repository's devDependency resolved to, alone in
 * its folder (as a global install would be); returns its bin script.
 */
export async function provisionHomebridge(flavour: 'homebridge' | 'homebridge1'): Promise<{ bin: string; version: string }> {
  const version = await installedVersion(flavour);
  const pkg = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { overrides?: Record<string, string> };
  // Homebridge 2 needs the project's HAP-NodeJS pin (see package.json "overrides"); 1.x brings its own 0.x.
  const extra = version.startsWith('2.') && pkg.overrides ? { overrides: pkg.overrides } : {};
  const dir = await cachedInstall(`homebridge-${version}`, [`homebridge@${version}`], extra);
  const installed = JSON.parse(await readFile(join(dir, 'node_modules', 'homebridge', 'package.json'), 'utf8')) as { bin: Record<string, string> };
  const bin = installed.bin.homebridge;
  if (bin === undefined) throw new Error(`homebridge@${version} has no bin`);
  return { bin: join(dir, 'node_modules', 'homebridge', bin), version };
}

export interface PackedPlugin {
  /** The tarball npm pack wrote. */
  tarball: string;
  /** Paths inside the tarball (relative, e.g. "dist/index.js"). */
  files: string[];
  /** The folder to hand Homebridge as its plugin path (`-P`): the install's node_modules. */
  pluginPath: string;
  /** The installed plugin: <pluginPath>/homebridge-lock-access. */
  packageDir: string;
  /** Top-level packages the install brought (dependencies and their dependencies). */
  installed: string[];
  /** The temp folder holding all of it. */
  root: string;
}

/** Packs the built repository and installs the tarball with --omit=dev into an empty folder. */
export async function packAndInstall(): Promise<PackedPlugin> {
  if (!existsSync(join(REPO_ROOT, 'dist', 'index.js'))) throw new Error('dist/ is not built: run npm run build');
  const root = await mkdtemp(join(tmpdir(), 'lock-access-package-'));
  const packed = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', root], REPO_ROOT);
  if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.output}`);
  const report = JSON.parse(packed.output.slice(packed.output.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  const entry = report[0];
  if (!entry) throw new Error(`npm pack reported nothing:\n${packed.output}`);
  const tarball = join(root, entry.filename);

  const install = join(root, 'install');
  await mkdir(install);
  await writeFile(join(install, 'package.json'), JSON.stringify({ name: 'lock-access-user', private: true }));
  const result = await npm(['install', '--omit=dev', '--no-package-lock', tarball], install);
  if (result.code !== 0) throw registryTrouble(`the packed plugin (${entry.filename}) with --omit=dev`, result.output);
  const pluginPath = join(install, 'node_modules');
  const listed = await npm(['ls', '--all', '--parseable', '--omit=dev'], install);
  const installed = listed.output
    .split('\n')
    .filter((line) => line.startsWith(pluginPath))
    .map((line) => line.slice(pluginPath.length + 1));
  return { tarball, files: entry.files.map((f) => f.path), pluginPath, packageDir: join(pluginPath, 'homebridge-lock-access'), installed, root };
}
