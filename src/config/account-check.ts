// The extra accounts of the config, checked before any call to the service: a mistake in one entry
// disables that entry alone (the error names its position, name and id, the field and the fix),
// and the main account and the other entries run.
import { createHash } from 'node:crypto';

import type { z } from 'zod/v3';

import { type AccountEntry, accountEntrySchema, INHERITED_CREDENTIALS, type InheritedCredential } from './account-entry.js';
import { isEntryList, pruneEntries } from './entry-lists.js';
import { MAIN_ACCOUNT_ID } from './fields.js';

/** An entry of `accounts` that does not run, and why (for the log, the status file and the settings page). */
export interface DisabledAccount {
  /** 1 for the first entry of `accounts`. */
  readonly position: number;
  /** Undefined when the entry has no usable id. */
  readonly id: string | undefined;
  readonly name: string;
  readonly reason: string;
}

export interface AccountsCheck {
  /** The entries that run, in config order. */
  readonly accounts: AccountEntry[];
  /** Sentences for the log: refused entries, and device entries left out inside a running one. */
  readonly problems: string[];
  readonly disabled: DisabledAccount[];
}

/** What the extra accounts' check needs to know of the main account. */
export interface MainAccountFacts {
  readonly refreshToken?: string | undefined;
  /** Top-level account fields with a mistake: an entry that takes one of them cannot run. */
  readonly broken: ReadonlySet<InheritedCredential>;
}

const seedHash = (seed: string) => createHash('sha256').update(seed, 'utf8').digest('hex');

function describe(position: number, entry: unknown): { id: string | undefined; name: string; label: string } {
  const fields = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
  const id = typeof fields.id === 'string' && fields.id !== '' ? fields.id : undefined;
  const name = typeof fields.name === 'string' && fields.name.trim() !== '' ? fields.name.trim() : undefined;
  const known = [id === undefined ? '' : `id "${id}"`, name ?? ''].filter(Boolean);
  return { id, name: name ?? id ?? `account ${position}`, label: `Account ${position} of accounts${known.length > 0 ? ` (${known.join(', ')})` : ''}` };
}

/** The sentences of a refused entry's issues, outside its device lists. */
function issueTexts(issues: readonly z.ZodIssue[]): string[] {
  return issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    return field === '' || issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
  });
}

/** Checks `raw` (the config's `accounts`) in config order; nothing here reads a file or the network. */
export function checkAccounts(raw: unknown, main: MainAccountFacts): AccountsCheck {
  if (raw === undefined || raw === null) return { accounts: [], problems: [], disabled: [] };
  if (!Array.isArray(raw)) {
    return { accounts: [], problems: ['accounts must be a list of account entries; it is ignored until you fix it in the plugin settings. The main account runs.'], disabled: [] };
  }
  const schema = accountEntrySchema();
  const accounts: AccountEntry[] = [];
  const problems: string[] = [];
  const disabled: DisabledAccount[] = [];
  /** Ids and seeds of earlier entries (the main account first), each with the words that name its entry. */
  const ids = new Map<string, string>([[MAIN_ACCOUNT_ID, 'the top-level account']]);
  const seeds = new Map<string, string>();
  if (main.refreshToken !== undefined && main.refreshToken !== '') seeds.set(seedHash(main.refreshToken), 'the top-level account');
  raw.forEach((entry: unknown, index) => {
    const position = index + 1;
    const { id, name, label } = describe(position, entry);
    const refuse = (reasons: string[]) => {
      const reason = reasons.join('; ');
      disabled.push({ position, id, name, reason });
      problems.push(`${label} is disabled until you fix it in the plugin settings: ${reason}. The main account and the other accounts run.`);
    };
    let parsed = schema.safeParse(entry);
    if (!parsed.success) {
      const outside = parsed.error.issues.filter((issue) => !isEntryList(issue.path[0]));
      if (outside.length > 0) {
        refuse(issueTexts(outside));
        return;
      }
      // A mistake inside one of its device entries leaves that device entry out, as at the top level.
      const { pruned, disabled: devices } = pruneEntries(entry as Record<string, unknown>, parsed.error.issues, `accounts[${index}].`);
      problems.push(...devices);
      parsed = schema.safeParse(pruned);
      if (!parsed.success) {
        refuse(issueTexts(parsed.error.issues));
        return;
      }
    }
    const account = parsed.data;
    const earlierId = ids.get(account.id);
    if (earlierId !== undefined) {
      refuse([`id "${account.id}" is already used by ${earlierId}: give this account an id of its own (its callback addresses and its storage folder are named by it)`]);
      return;
    }
    ids.set(account.id, label.replace(/^Account/, 'account'));
    const seed = account.refreshToken === undefined || account.refreshToken === '' ? undefined : seedHash(account.refreshToken);
    const earlierSeed = seed === undefined ? undefined : seeds.get(seed);
    if (earlierSeed !== undefined) {
      refuse([`refreshToken is the one ${earlierSeed} was linked with, so it is the same account entered twice: remove this entry, or link it with the refresh token of the other account`]);
      return;
    }
    if (seed !== undefined) seeds.set(seed, label.replace(/^Account/, 'account'));
    const inherited = INHERITED_CREDENTIALS.filter((field) => account[field] === undefined && main.broken.has(field));
    if (inherited.length > 0) {
      refuse(inherited.map((field) => `${field} is taken from the top-level account fields, where it has a mistake: fix the top-level ${field}, or give this account its own`));
      return;
    }
    accounts.push(account);
  });
  return { accounts, problems, disabled };
}
