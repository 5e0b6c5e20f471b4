// The last net under the orphan guards: every running ffmpeg is written down (its pid, when it
// started and its program's name) in a file of the plugin's folder, and the next start ends any
// that still runs and is still that very process (same start time, same name: a pid reused by
// another program since is left alone). Reading a process: /proc on Linux, `ps` on macOS and the
// BSDs; on Windows nothing is read, so nothing is swept.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';

import { z } from 'zod/v3';

import { errorText } from '../util/error-text.js';
import type { Logger } from '../util/logger.js';

/** The ledger's file in the plugin's folder (written with mode 0600 like the others). */
export const CHILD_LEDGER_FILE = 'ffmpeg-children.json';

const entrySchema = z.object({ pid: z.number().int().positive(), start: z.string().min(1), name: z.string().min(1) });
const ledgerSchema = z.object({ children: z.array(entrySchema) });
type Entry = z.infer<typeof entrySchema>;

/** Where the ledger lives: the text of its file (undefined when there is none), and a write of its content. */
export interface LedgerStore {
  read(): Promise<string | undefined>;
  write(value: unknown): Promise<void>;
}

/** A running process as the system tells it: when it started (a token) and its program's name. */
export interface ProcessFacts {
  start: string;
  name: string;
}

export interface ProcessReader {
  /** The facts of a running process; undefined when it has ended (a zombie has ended) or cannot be read. */
  facts(pid: number): Promise<ProcessFacts | undefined>;
  kill(pid: number): void;
}

/** The kernel keeps at most 15 characters of a program's name. */
const sameName = (a: string, b: string) => a.slice(0, 15) === b.slice(0, 15);

async function linuxFacts(pid: number): Promise<ProcessFacts | undefined> {
  try {
    const [stat, boot] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')]);
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    // After the name: state, then (field 22 of the line) the start time in clock ticks since boot.
    if (fields[0] === 'Z' || fields[19] === undefined) return undefined;
    return { start: `${boot.trim()}:${fields[19]}`, name: stat.slice(stat.indexOf('(') + 1, close) };
  } catch {
    return undefined;
  }
}

function psFacts(pid: number): Promise<ProcessFacts | undefined> {
  return new Promise((resolve) => {
    execFile('ps', ['-o', 'stat=,lstart=,comm=', '-p', String(pid)], { timeout: 5_000 }, (error, stdout) => {
      // lstart is always 24 characters ("Sat Nov 28 02:24:17 2026"); comm may be a whole path.
      const match = error ? null : /^\s*(\S+)\s+(.{24})\s+(.+?)\s*$/.exec(stdout);
      if (!match?.[1] || match[1].startsWith('Z') || !match[2] || !match[3]) resolve(undefined);
      else resolve({ start: match[2], name: basename(match[3]) });
    });
  });
}

export const systemProcesses: ProcessReader = {
  facts: (pid) => (process.platform === 'linux' ? linuxFacts(pid) : process.platform === 'win32' ? Promise.resolve(undefined) : psFacts(pid)),
  kill: (pid) => {
    process.kill(pid, 'SIGKILL');
  },
};

export class ChildLedger {
  private readonly entries = new Map<number, Entry>();
  private writing: Promise<void> = Promise.resolve();
  private warned = false;

  constructor(
    private readonly store: LedgerStore,
    private readonly log: Logger,
    private readonly processes: ProcessReader = systemProcesses,
  ) {}

  /**
   * Ends every ffmpeg the ledger names that still runs as that same process (left by a Homebridge
   * that died without a shutdown), then starts a new ledger. Resolves how many were ended; never rejects.
   */
  async sweep(): Promise<number> {
    let ended = 0;
    for (const entry of await this.readEntries()) {
      const now = await this.processes.facts(entry.pid);
      if (now?.start !== entry.start || !sameName(now.name, entry.name)) continue;
      try {
        this.processes.kill(entry.pid);
        ended += 1;
      } catch (error) {
        this.log.debug(`Could not end the ffmpeg left running (pid ${entry.pid}): ${errorText(error)}`);
      }
    }
    if (ended > 0) this.log.info(`Ended ${ended === 1 ? 'an ffmpeg' : `${ended} ffmpeg processes`} left running by the last run, which ended without a shutdown.`);
    this.save();
    await this.settled();
    return ended;
  }

  /** Writes down a child that has just started from the program at `path`. */
  async add(pid: number, path: string): Promise<void> {
    const facts = await this.processes.facts(pid);
    // Ended already (or unreadable): nothing to find at the next start.
    if (facts === undefined) return;
    this.entries.set(pid, { pid, start: facts.start, name: basename(path) });
    this.save();
  }

  /** Strikes out a child that has ended. */
  remove(pid: number): void {
    if (this.entries.delete(pid)) this.save();
  }

  /** Resolves once every write asked for so far has landed (or failed). */
  settled(): Promise<void> {
    return this.writing;
  }

  private async readEntries(): Promise<Entry[]> {
    try {
      const text = await this.store.read();
      if (text === undefined) return [];
      const parsed = ledgerSchema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data.children : [];
    } catch (error) {
      // A damaged or unreadable ledger: nothing to sweep; the next write replaces it.
      this.log.debug(`The list of running ffmpeg processes could not be read (${errorText(error)}).`);
      return [];
    }
  }

  /** Writes in order; each write carries the list as it is when its turn comes. */
  private save(): void {
    this.writing = this.writing.then(async () => {
      try {
        await this.store.write({ children: [...this.entries.values()] });
      } catch (error) {
        if (this.warned) return;
        this.warned = true;
        this.log.debug(`The list of running ffmpeg processes could not be written (${errorText(error)}); a Homebridge that is killed may leave one running.`);
      }
    });
  }
}
