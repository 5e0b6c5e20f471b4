// @ts-check
// The block's accounts as the page shows them: the main account (the block's own fields, id `main`)
// first, then each entry of `accounts` in config order; what a request about one of them sends; its
// link state for its badge; and which accounts hold each device and which one owns it.
import { account, block } from './config-block.js';
import { t } from './i18n.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */
/** @typedef {import('../../types/page.js').DeviceKind} DeviceKind */
/** @typedef {{ id: string; name: string; main: boolean }} PageAccount */
/** @typedef {{ state: string; message: import('../../types/page.js').UiMessage | undefined }} AccountLink */
/** @typedef {Record<string, unknown> & { id: string; name?: unknown; locks?: unknown; doorbells?: unknown }} AccountEntry */

export const MAIN = 'main';
/** The config's rule for an extra account's id (src/config/fields.ts ACCOUNT_ID_PATTERN). */
export const ACCOUNT_ID = /^[a-z0-9-]{1,32}$/;

/** The last status answer: links per account and the shared devices' holders. @type {UiStatus | undefined} */
let status;

/** @param {UiStatus} answer */
export function setAccountStatus(answer) {
  status = answer;
}

/** The entries of `accounts` that have an id (the config check refuses the others). @returns {AccountEntry[]} */
export function accountEntries() {
  const list = block().accounts;
  return Array.isArray(list) ? /** @type {AccountEntry[]} */ (list.filter((e) => typeof e === 'object' && e !== null && typeof e.id === 'string')) : [];
}

/** @returns {PageAccount[]} */
export function accountList() {
  return [
    { id: MAIN, name: t('accounts.mainName'), main: true },
    ...accountEntries().map((e) => ({ id: e.id, name: typeof e.name === 'string' && e.name.trim() !== '' ? e.name.trim() : e.id, main: false })),
  ];
}

/** @param {string} id */
export function accountName(id) {
  return accountList().find((a) => a.id === id)?.name ?? id;
}

/** Whether the block has extra accounts (the page then names the account of each device and link). */
export function severalAccounts() {
  return accountEntries().length > 0;
}

/** Which account the link panel links: a row's "Link account" chooses it. */
let linkTarget = MAIN;

export function linkTargetId() {
  if (!accountList().some((a) => a.id === linkTarget)) linkTarget = MAIN;
  return linkTarget;
}

/** @param {string} id */
export function setLinkTarget(id) {
  linkTarget = id;
}

/**
 * What a settings-server request about account `id` sends: the block's (maybe unsaved) fields and,
 * for an extra account, its id and its entry's own key, client and name.
 * @param {string} id
 */
export function accountRequest(id) {
  if (id === MAIN) return { account: account() };
  const entry = accountEntries().find((e) => e.id === id);
  /** @type {Record<string, string>} */
  const own = {};
  for (const key of ['apiKey', 'clientId', 'clientSecret', 'name']) {
    const value = entry?.[key];
    if (typeof value === 'string' && value !== '') own[key] = value;
  }
  return { account: account(), accountId: id, entry: own };
}

/**
 * An account's badge: its token file's link, or, from the running plugin, disabled or waiting to be
 * compared with the earlier accounts' users (each with why), or events not arriving.
 * @param {string} id
 * @returns {AccountLink}
 */
export function accountLink(id) {
  const plugin = status?.pluginRunning ? status.plugin : undefined;
  if (id === MAIN) {
    const link = status?.link;
    if (link?.state === 'linked' && plugin?.delivery?.state === 'notArriving') return { state: 'notArriving', message: undefined };
    return { state: link?.state ?? 'unlinked', message: link?.message };
  }
  const running = plugin?.accounts?.[id];
  const link = status?.accounts?.[id];
  if (running?.link.state === 'disabled') return { state: 'disabled', message: running.link.message };
  // Waiting holds while the account is linked; a link lost since says more.
  if (running?.link.state === 'waiting' && link?.state === 'linked') return { state: 'waiting', message: running.link.message };
  if (link?.state === 'linked' && running?.delivery?.state === 'notArriving') return { state: 'notArriving', message: undefined };
  return { state: link?.state ?? 'unlinked', message: link?.message };
}

/** Whether an account can own devices now: linked ("re-authorization needed" and waiting count) and not disabled. @param {string} id */
export function canOwn(id) {
  return ['linked', 'reauthorizationNeeded', 'notArriving', 'checkSettings', 'waiting'].includes(accountLink(id).state);
}

/**
 * The config entry list an account keeps its devices in: the block itself for the main account.
 * @param {Record<string, unknown>} target the block, or a draft of it
 * @param {string} id
 * @returns {Record<string, unknown> | undefined}
 */
export function accountTarget(target, id) {
  if (id === MAIN) return target;
  const list = Array.isArray(target.accounts) ? target.accounts : [];
  return /** @type {Record<string, unknown> | undefined} */ (list.find((e) => typeof e === 'object' && e !== null && /** @type {{ id?: unknown }} */ (e).id === id));
}

/**
 * @param {Record<string, unknown> | undefined} target
 * @param {DeviceKind} kind
 * @returns {{ id?: unknown; account?: unknown }[]}
 */
function listOf(target, kind) {
  const list = target?.[kind === 'lock' ? 'locks' : 'doorbells'];
  return Array.isArray(list) ? list : [];
}

/**
 * The accounts that hold a device, in config order, and its owner: the plugin's record when it has
 * one, else the owner rule on what the page knows (an entry's `account`, else the first holder).
 * @param {DeviceKind} kind
 * @param {string} id
 * @param {Iterable<string>} found accounts whose "Find my devices" listed it
 * @returns {{ holders: string[]; owner: string }}
 */
export function holdingOf(kind, id, found) {
  const order = accountList().map((a) => a.id);
  const kept = status?.holdings?.[`${kind}:${id}`];
  const named = new Set([...found, ...(kept?.holders ?? [])]);
  for (const account of order) if (listOf(accountTarget(block(), account), kind).some((e) => e.id === id)) named.add(account);
  const holders = order.filter((account) => named.has(account));
  if (holders.length === 0) holders.push(MAIN);
  const keptOwner = kept?.owner !== undefined && holders.includes(kept.owner) ? kept.owner : undefined;
  const owner = keptOwner ?? chosenOwners(kind, id).find((a) => holders.includes(a)) ?? holders[0] ?? MAIN;
  return { holders, owner };
}

/**
 * The accounts the config's entries for a device name with `"account"`, in config order.
 * @param {DeviceKind} kind
 * @param {string} id
 * @returns {string[]}
 */
function chosenOwners(kind, id) {
  return accountList().flatMap((a) => listOf(accountTarget(block(), a.id), kind).filter((e) => e.id === id && typeof e.account === 'string').map((e) => String(e.account)));
}

/**
 * The shared devices `id` owns that another account able to own them also holds, each with the
 * account it goes to by the owner rule: what an unlink of `id` hands over.
 * @param {string} id
 * @returns {{ kind: DeviceKind; deviceId: string; next: string }[]}
 */
export function handedOverBy(id) {
  const order = accountList().map((a) => a.id);
  return Object.entries(status?.holdings ?? {}).flatMap(([key, holding]) => {
    if (holding.owner !== id) return [];
    const [kind, ...rest] = key.split(':');
    if (kind !== 'lock' && kind !== 'doorbell') return [];
    const deviceId = rest.join(':');
    const eligible = (/** @type {string} */ account) => account !== id && holding.holders.includes(account) && canOwn(account);
    const next = chosenOwners(kind, deviceId).find(eligible) ?? order.find(eligible);
    return next === undefined ? [] : [{ kind, deviceId, next }];
  });
}
