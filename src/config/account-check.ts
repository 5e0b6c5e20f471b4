// The extra accounts of the config, checked before any call to the service: a mistake in one entry
// disables that entry alone (the error names its position, name and id, the field and the fix),
// and the main account and the other entries run.
import { createHash } from 'node:crypto';

import type { z } from 'zod/v3';

import { type AccountEntry, accountEntrySchema, INHERITED_CREDENTIALS, type InheritedCredential } from './account-entry.js';
import { issueMessage } from '../util/field-messages.js';
import type { UiMessage } from '../util/ui-message.js';
import { configMessage } from './config-messages.js';
import { isEntryList, pruneEntries } from './entry-lists.js';
import { MAIN_ACCOUNT_ID } from './fields.js';

/** An entry of `accounts` that does not run, and why (for the log, the status file and the settings page). */
export interface DisabledAccount {
  /** 1 for the first entry of `accounts`. */
  readonly position: number;
  /** Undefined when the entry has no usable id. */
  readonly id: string | undefined;
  readonly name: string;
  /** What to fix, in English (the log). */
  readonly reason: string;
  /** The same as messages: the settings page shows them next to the field, in its language. */
  readonly problems: UiMessage[];
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

/** An entry as the config names it: its position, and its id and name as far as they are given. */
interface Described {
  readonly id: string | undefined;
  readonly name: string;
  readonly label: string;
  readonly position: number;
  /** `id "cabin", Cabin`: what the label shows in brackets (config values, no words). */
  readonly known: string;
}

function describe(position: number, entry: unknown): Described {
  const fields = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>) : {};
  const id = typeof fields.id === 'string' && fields.id !== '' ? fields.id : undefined;
  const name = typeof fields.name === 'string' && fields.name.trim() !== '' ? fields.name.trim() : undefined;
  const known = [id === undefined ? '' : `id "${id}"`, name ?? ''].filter(Boolean).join(', ');
  return { id, name: name ?? id ?? `account ${position}`, label: `Account ${position} of accounts${known !== '' ? ` (${known})` : ''}`, position, known };
}

/** The messages of a refused entry's issues, outside its device lists (the log's sentence names the field). */
function issueProblems(issues: readonly z.ZodIssue[]): UiMessage[] {
  return issues.map((issue) => {
    const message = issueMessage(issue);
    const field = issue.path.map(String).join('.');
    return field === '' || message.text.startsWith(field) ? message : { ...message, text: `${field}: ${message.text}` };
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
  /** Ids and seeds of earlier entries, each with the entry (the main account: 'main'). */
  const ids = new Map<string, Described | 'main'>([[MAIN_ACCOUNT_ID, 'main']]);
  const seeds = new Map<string, Described | 'main'>();
  if (main.refreshToken !== undefined && main.refreshToken !== '') seeds.set(seedHash(main.refreshToken), 'main');
  raw.forEach((entry: unknown, index) => {
    const position = index + 1;
    const described = describe(position, entry);
    const { id, name, label } = described;
    const refuse = (reasons: UiMessage[]) => {
      const reason = reasons.map((message) => message.text).join('; ');
      disabled.push({ position, id, name, reason, problems: reasons });
      problems.push(`${label} is disabled until you fix it in the plugin settings: ${reason}. The main account and the other accounts run.`);
    };
    let parsed = schema.safeParse(entry);
    if (!parsed.success) {
      const outside = parsed.error.issues.filter((issue) => !isEntryList(issue.path[0]));
      if (outside.length > 0) {
        refuse(issueProblems(outside));
        return;
      }
      // A mistake inside one of its device entries leaves that device entry out, as at the top level.
      const { pruned, disabled: devices } = pruneEntries(entry as Record<string, unknown>, parsed.error.issues, `accounts[${index}].`);
      problems.push(...devices);
      parsed = schema.safeParse(pruned);
      if (!parsed.success) {
        refuse(issueProblems(parsed.error.issues));
        return;
      }
    }
    const account = parsed.data;
    const earlierId = ids.get(account.id);
    if (earlierId !== undefined) {
      refuse([earlierId === 'main'
        ? configMessage('config.account.idTakenByMain', { id: account.id })
        : configMessage('config.account.idTaken', { id: account.id, position: earlierId.position, entry: earlierId.known })]);
      return;
    }
    ids.set(account.id, described);
    const seed = account.refreshToken === undefined || account.refreshToken === '' ? undefined : seedHash(account.refreshToken);
    const earlierSeed = seed === undefined ? undefined : seeds.get(seed);
    if (earlierSeed !== undefined) {
      refuse([earlierSeed === 'main'
        ? configMessage('config.account.sameTokenAsMain')
        : configMessage('config.account.sameToken', { position: earlierSeed.position, entry: earlierSeed.known })]);
      return;
    }
    if (seed !== undefined) seeds.set(seed, described);
    const inherited = INHERITED_CREDENTIALS.filter((field) => account[field] === undefined && main.broken.has(field));
    if (inherited.length > 0) {
      refuse(inherited.map((field) => configMessage('config.account.inheritedBroken', { field })));
      return;
    }
    accounts.push(account);
  });
  return { accounts, problems, disabled };
}
