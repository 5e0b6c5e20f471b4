// The sentences the token jobs show users, in one place: the README quotes the advice, and the
// same situation must read the same wherever it is noticed.

/** The fixed part of the log line when the user must link again (documented in the README). */
export const REAUTHORIZATION_ADVICE =
  'Open the plugin settings in the Homebridge UI and link your Lock Access account again (or paste a new refresh token there). Until then HomeKit shows the last known state.';

export const NOT_LINKED_MESSAGE = 'Lock Access is not linked to an account: open the plugin settings in the Homebridge UI and link your account (or enter a refresh token).';

/** Start-up after an unlink (the tombstone): why nothing links, although tokens may still be in the config. */
export const UNLINKED_AT_START_MESSAGE =
  'Lock Access is unlinked (in the plugin settings, or because the account was deleted) and stays idle: tokens still in the plugin settings are not used again. Link the account in the plugin settings (or enter a new refresh token) to resume.';

export const UNCERTAIN_MESSAGE =
  'A token renewal got no usable answer (or Homebridge stopped while it ran). The service may have replaced the refresh token without the plugin receiving the new one, so the old one will never be sent again. The plugin keeps using the current access token, which stays valid, and keeps it alive every day.';

/** What callers are told once the link is lost for good. */
export const RELINK_MESSAGE = `Lock Access needs you to link your account again. ${REAUTHORIZATION_ADVICE}`;

/**
 * The token endpoint blamed our own settings (RFC 6749 `invalid_client`, `unauthorized_client`,
 * `invalid_request`): which setting to fix, and that nothing was lost. `code` is the OAuth error
 * word or the HTTP status, never anything the service echoed.
 */
export function settingsAdvice(setting: 'clientSecret' | 'clientId' | 'clientId and clientSecret', code: string): string {
  const what = setting === 'clientSecret'
    ? 'the service did not accept the client credentials, which usually means clientSecret is wrong (or clientId belongs to another client)'
    : setting === 'clientId'
      ? 'the service says this client may not renew tokens, so clientId is probably wrong'
      : 'the service found the renewal request malformed, so check clientId and clientSecret for missing characters or stray spaces';
  return `${what} (${code}). Fix ${setting === 'clientId and clientSecret' ? 'them' : setting} in the plugin settings and restart Homebridge: the refresh token was not used and links again as it is.`;
}

/** Storage faults right after a grant: the new tokens are in use but not on disk yet. */
export function notSavedMessage(reason: string): string {
  return `The renewed tokens are in use but not saved yet (${reason}). The plugin keeps retrying the save; free disk space or fix the folder's permissions, and do not restart Homebridge until a later line says the tokens are saved.`;
}
