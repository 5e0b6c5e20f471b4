// The settings page's check before it hands a changed config block to the Homebridge UI: the
// plugin's own config rules, answered per field so the page can show each problem next to the
// field that holds the value. Fields not filled in yet are no problem here: the page is also used
// to fill them in one at a time, and the plugin names what is still missing when it starts.
import { configSchema, missingFields } from '../config.js';
import { checkAccounts } from '../config/account-check.js';
import { issueMessage } from '../util/field-messages.js';
import type { UiMessage } from '../util/ui-message.js';

export interface FieldProblem {
  /** Where the value sits in the block, e.g. ['webhook', 'listenPort']. */
  path: (string | number)[];
  /**
   * What is wrong and what to fix, as a code the page words in its language (English `text` for
   * the log); never the value itself (it may be a secret).
   */
  message: UiMessage;
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function valueAt(raw: unknown, path: readonly (string | number)[]): unknown {
  let value: unknown = raw;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[key];
  }
  return value;
}

/**
 * Entries of `accounts` the plugin would disable although each is well formed on its own: an id an
 * earlier entry uses, a refresh token entered twice. The field is the first word of the reason.
 */
function accountProblems(raw: unknown, problems: readonly FieldProblem[]): FieldProblem[] {
  const main = valueAt(raw, ['refreshToken']);
  const check = checkAccounts(valueAt(raw, ['accounts']), { refreshToken: typeof main === 'string' ? main : undefined, broken: new Set() });
  return check.disabled
    .filter((entry) => !problems.some((problem) => problem.path[0] === 'accounts' && problem.path[1] === entry.position - 1))
    .flatMap((entry) => entry.problems.map((message) => ({ path: ['accounts', entry.position - 1, /^refreshToken\b/.test(message.text) ? 'refreshToken' : 'id'], message })));
}

/** The problems the plugin would refuse `raw` for, one per field; empty when it accepts it. */
export function configProblems(raw: unknown): FieldProblem[] {
  const parsed = configSchema().safeParse(raw);
  if (parsed.success) return accountProblems(raw, []);
  const problems: FieldProblem[] = [];
  const missing = missingFields(raw);
  for (const issue of parsed.error.issues) {
    const path = [...issue.path];
    const dotted = path.join('.');
    // A required field not filled in yet (or the missing object that would hold it).
    if (isBlank(valueAt(raw, path)) && missing.some((field) => field === dotted || field.startsWith(`${dotted}.`))) continue;
    problems.push({ path, message: issueMessage(issue) });
  }
  return [...problems, ...accountProblems(raw, problems)];
}
