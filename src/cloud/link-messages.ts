// The link's sentences as message codes: the status file and the settings page show them in the
// user's language, the log in English. The token jobs keep a sentence in the token file
// (`message`); messageOfSentence() turns a known one back into its code, also one an earlier
// version wrote, and shows any other as it is.
import { legacyMessage, messageCatalog, type UiMessage } from '../util/ui-message.js';

const ADVICE = 'Open the plugin settings in the Homebridge UI and link your Lock Access account again (or paste a new refresh token there). Until then HomeKit shows the last known state.';

export const LINK_MESSAGES = {
  'link.linked': 'Linked to your Lock Access account.',
  'link.notYet': 'Not linked yet: link your Lock Access account in the plugin settings.',
  'link.unlinked': 'Not linked: open the plugin settings and link your Lock Access account, or paste a refresh token.',
  'link.reauthorizationNeeded': 'Re-authorization needed: the service no longer accepts the stored tokens. Open the plugin settings and link the account again (or paste a new refresh token).',
  'link.advice': ADVICE,
  'link.notLinked': 'Lock Access is not linked to an account: open the plugin settings in the Homebridge UI and link your account (or enter a refresh token).',
  'link.unlinkedAtStart': 'Lock Access is unlinked (in the plugin settings, or because the account was deleted) and stays idle: tokens still in the plugin settings are not used again. Link the account in the plugin settings (or enter a new refresh token) to resume.',
  'link.uncertain': 'A token renewal got no usable answer (or Homebridge stopped while it ran). The service may have replaced the refresh token without the plugin receiving the new one, so the old one will never be sent again. The plugin keeps using the current access token, which stays valid, and keeps it alive every day.',
  'link.relink': `Lock Access needs you to link your account again. ${ADVICE}`,
  'link.refused': 'The Lock Access service refused the stored refresh token (it is used, expired or revoked).',
  'link.accessLost.uncertain': 'The service no longer accepts the access token, and the last refresh token may have been used without the answer reaching the plugin.',
  'link.accessLost.noRefreshToken': 'The service no longer accepts the access token and there is no refresh token left.',
  'link.accessLost.renewalFailed': 'The service no longer accepts the access token and the renewal did not help.',
  'link.checkSettings': 'The Lock Access token service refused the client ID or client secret in the plugin settings. Check both against the ones the service gave you, save, and restart Homebridge. The stored link is kept.',
  'link.checkSetting': 'The Lock Access token service refused {field} in the plugin settings. Check it against the one the service gave you, save, and restart Homebridge. The stored link is kept.',
  'link.tokensNotSaved': 'The renewed tokens are in use but not saved yet. The plugin keeps retrying the save; free disk space or fix the folder\'s permissions, and do not restart Homebridge until the Homebridge log says the tokens are saved.',
  'link.notSaved': 'The renewed tokens are in use but not saved yet ({reason}). The plugin keeps retrying the save; free disk space or fix the folder\'s permissions, and do not restart Homebridge until a later line says the tokens are saved.',
  'link.mainDisabled': 'The main account (the top-level account fields) is disabled until you fix it in the plugin settings: {fields}. It sends nothing; the extra accounts with their own API key, client ID and client secret run.',
  'link.test.ok': 'Connected: the Lock Access service accepted the access token.',
  'link.test.refused': `The service refused the access token. ${ADVICE}`,
  'link.test.unreachable': 'Could not reach the Lock Access service ({reason}). Try again later.',
  'link.test.failed': 'The connection test failed: {reason}',
} as const;

export const linkMessage = messageCatalog(LINK_MESSAGES);

type LinkCode = keyof typeof LINK_MESSAGES;

/** Each fixed sentence (no placeholder) by its words. */
let bySentence: Map<string, LinkCode> | undefined;

/** A sentence of the token jobs as its message: its code when it is one of the fixed sentences. */
export function messageOfSentence(sentence: string): UiMessage {
  bySentence ??= new Map(Object.entries(LINK_MESSAGES).flatMap(([code, text]) => (text.includes('{') ? [] : [[text, code as LinkCode] as const])));
  const code = bySentence.get(sentence);
  return code === undefined ? legacyMessage(sentence) : linkMessage(code);
}

/** The refused setting as the page names it: its field when the token service said which, else both. */
export function checkSettingsMessage(setting: string | undefined): UiMessage {
  return setting === 'clientId' || setting === 'clientSecret' ? linkMessage('link.checkSetting', { field: setting }) : linkMessage('link.checkSettings');
}

/**
 * What the page shows of a link beyond its state: a setting to fix (the field, when known) or
 * tokens not saved yet (their details, English, are in the log), else the token jobs' own
 * sentence; undefined when neither.
 */
export function linkStatusMessage(problem: 'settings' | 'notSaved' | undefined, sentence: string | undefined, setting?: string): UiMessage | undefined {
  if (problem === 'notSaved') return linkMessage('link.tokensNotSaved');
  if (problem === 'settings') return checkSettingsMessage(setting);
  return sentence === undefined ? undefined : messageOfSentence(sentence);
}
