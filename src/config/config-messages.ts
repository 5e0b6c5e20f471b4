// The config's own field problems as message codes (the generic ones are util/field-messages.ts):
// the public address, the tunnel, device and account ids, people, and what to fix for each
// credential (`config.fix.*`, a `{fix}` param of a missing or empty field). The English templates
// are the log's words; the settings page shows en.json's words for these keys in its language.
import { messageCatalog, type MessageParams } from '../util/ui-message.js';
import { zodWords } from '../util/field-messages.js';

/** Phrases several messages share. */
const PHRASE = {
  appOrFind: 'copy it from the Lock Access app or use Find my devices in the plugin settings',
  idFix: 'each account needs an id of 1 to 32 lowercase letters, digits or dashes, such as "cabin"; the settings page makes one when you add an account',
  ownId: 'give this account an id of its own (its callback addresses and its storage folder are named by it)',
  sameToken: 'so it is the same account entered twice: remove this entry, or link it with the refresh token of the other account',
  examplePath: '(letters of any language and spaces are fine)',
} as const;

export const CONFIG_MESSAGES = {
  'config.fix.apiKey': 'copy the API key issued to you by Lock Access into the plugin settings',
  'config.fix.clientId': 'copy the OAuth client id issued to you by Lock Access into the plugin settings',
  'config.fix.clientSecret': 'copy the OAuth client secret issued to you by Lock Access into the plugin settings',
  'config.fix.accountApiKey': 'copy the API key issued to you by Lock Access, or leave it out to use the top-level one',
  'config.fix.accountClientId': 'copy the OAuth client id issued to you by Lock Access, or leave it out to use the top-level one',
  'config.fix.accountClientSecret': 'copy the OAuth client secret issued to you by Lock Access, or leave it out to use the top-level one',
  'config.fix.authtoken': 'copy your authtoken from https://dashboard.ngrok.com/get-started/your-authtoken into the plugin settings',
  'config.publicUrl.missing': 'webhook.publicUrl is missing: enter the https address that reaches this plugin, such as https://home.example.net/lock-access, or set up the built-in ngrok tunnel (webhook.tunnel)',
  'config.publicUrl.query': 'webhook.publicUrl must not contain ? or #: the plugin appends /lock/ID and /doorbell/ID to it, which a query string or fragment would swallow (every callback would then get 404). Put any key in the path instead, or leave it out',
  'config.publicUrl.encodedChars': `webhook.publicUrl has {chars} in its path, an escaped / ? # or %: the plugin cannot route callbacks under such a path. Choose a path without it, such as https://home.example.net/lock-access ${PHRASE.examplePath}`,
  'config.publicUrl.badPercent': `webhook.publicUrl has a % in its path that does not start an escape such as %20: write the path as it is meant to read ${PHRASE.examplePath}, such as https://home.example.net/lock-access`,
  'config.tunnel.provider': 'webhook.tunnel.provider must be "ngrok" (the one built-in tunnel)',
  'config.tunnel.domain': 'webhook.tunnel.domain must be a domain name such as name.ngrok-free.app, as the ngrok dashboard shows it under Domains',
  'config.lock.idMissing': `each lock needs an id: ${PHRASE.appOrFind}`,
  'config.lock.idEmpty': `the lock id is empty: ${PHRASE.appOrFind}`,
  'config.doorbell.idMissing': `each doorbell needs an id: ${PHRASE.appOrFind}`,
  'config.doorbell.idEmpty': `the doorbell id is empty: ${PHRASE.appOrFind}`,
  'config.person.userIdMissing': 'each person needs a userId: pick people in the plugin settings, which fill it in',
  'config.person.userIdEmpty': 'a person\'s userId is empty',
  'config.owner.invalid': 'account must be the id of an account in this block ("main" for the top-level one)',
  'config.owner.pattern': 'account must be the id of an account in this block ("main" for the top-level one): 1 to 32 lowercase letters, digits or dashes',
  'config.account.idMissing': `id is missing: ${PHRASE.idFix}`,
  'config.account.idPattern': `id must be 1 to 32 lowercase letters, digits or dashes: ${PHRASE.idFix}`,
  'config.account.idReserved': 'id "main" is reserved for the top-level account: choose another id, such as "cabin"',
  'config.account.idTakenByMain': `id "{id}" is already used by the top-level account: ${PHRASE.ownId}`,
  'config.account.idTaken': `id "{id}" is already used by account {position} of accounts ({entry}): ${PHRASE.ownId}`,
  'config.account.sameTokenAsMain': `refreshToken is the one the top-level account was linked with, ${PHRASE.sameToken}`,
  'config.account.sameToken': `refreshToken is the one account {position} of accounts ({entry}) was linked with, ${PHRASE.sameToken}`,
  'config.account.inheritedBroken': '{field} is taken from the top-level account fields, where it has a mistake: fix the top-level {field}, or give this account its own',
} as const;

export type ConfigCode = keyof typeof CONFIG_MESSAGES;

export const configMessage = messageCatalog(CONFIG_MESSAGES);

/** configMessage as zod's words (see util/field-messages.ts). */
export function configProblem(code: ConfigCode, params?: MessageParams): string {
  return zodWords(configMessage(code, params));
}
