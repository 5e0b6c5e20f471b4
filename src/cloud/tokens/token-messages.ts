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
