// What the settings server says to the page, as message codes with their English templates (the
// same words as en.json's values for these keys). A `reason` param is the English text of an error
// from below (the service, the file system): the plugin's own words, never a secret.
import { messageCatalog } from '../util/ui-message.js';

export const SERVER_MESSAGES = {
  'server.unexpected': 'Something went wrong ({reason}). The Homebridge UI log has details.',
  'server.account.missing.apiKey': 'Enter the API key first.',
  'server.account.missing.clientId': 'Enter the client id first.',
  'server.account.missing.clientSecret': 'Enter the client secret first.',
  'server.account.missing.baseUrl': 'Enter the API address (baseUrl) first.',
  'server.account.missing.authUrl': 'Enter the authorization address (authUrl) first.',
  'server.account.notAddress.baseUrl': 'The API address (baseUrl) must be a full address starting with https://',
  'server.account.notAddress.authUrl': 'The authorization address (authUrl) must be a full address starting with https://',
  'server.account.badId': 'That account id is not valid: use 1 to 32 small letters, digits or dashes.',
  'server.account.unknown': 'There is no account "{id}" in the settings. Add it and save first.',
  'server.testEvent.chooseLock': 'Choose a lock for the test event.',
  'server.testEvent.sendFirst': 'Send a test event first.',
  'server.testEvent.notTaken': 'The service did not take the request ({reason}), so no test event was sent.',
  'server.link.pasteToken': 'Paste a refresh token first.',
  'server.link.failed': 'Linking failed: {reason}',
  'server.link.tokenRefused': 'Linking failed: the service did not accept the refresh token.',
  'server.link.notSaved':
    'Not linked yet: the service issued new tokens, but the token file could not be written ({reason}). The settings server keeps the tokens and keeps trying to save them, also after you close this page; the plugin takes them over once they are saved. Free disk space or fix the permissions of the plugin\'s storage folder, and do not restart Homebridge or the Homebridge UI until its log says the tokens of the new link are saved.',
  'server.link.linked': 'Linked. The plugin uses this link from now on; restart Homebridge if it was waiting for one.',
  'server.link.linkedWithToken': 'Linked with the refresh token. Do not keep a copy of it: it has been used and replaced.',
  'server.unlink.done': 'Unlinked: the stored tokens were deleted.',
  'server.unlink.notSaved': 'Unlinked for now, but the token file could not be written ({reason}): after a restart the stored tokens would be used again. Free disk space or fix the folder\'s permissions, then unlink again.',
  'server.unlink.listNotUpdated': 'The list of webhooks could not be updated ({reason}).',
  'server.unlink.handedOver': '{device} was handed over to {account}: registered there before this account\'s registration was deleted.',
  'server.unlink.handoverFailed': '{device} could not be registered for {account} ({reason}); this account\'s registration was deleted all the same. The plugin registers it for {account} at its next setup run.',
  'server.unlink.left': {
    one: '{count} webhook registration could not be deleted: {registrations}. It is deleted after the next link; until then the service may keep sending to it.',
    other: '{count} webhook registrations could not be deleted: {registrations}. They are deleted after the next link; until then the service may keep sending to them.',
  },
  'server.video.noRecording': 'This event has no recording.',
  'server.video.notFound': 'The recording could not be found: {reason}',
  'server.devices.notListed': 'Could not list your devices: {reason}',
  'server.oauth.redirectMissing': 'Enter the redirect address registered for your client id (a full https:// address).',
  'server.oauth.pasteAddress': 'Paste the whole address your browser showed after you allowed access.',
  'server.oauth.stateMismatch': 'That address does not answer the sign-in started here (its state does not match, or it is older than 15 minutes). Click "Sign in to Lock Access" again and paste the new address.',
  'server.oauth.denied': 'Access was not allowed on the Lock Access page. Start again and choose Allow.',
  'server.oauth.error': 'The Lock Access sign-in answered "{error}". Start again.',
  'server.oauth.errorDescribed': 'The Lock Access sign-in answered "{error}" ({description}). Start again.',
  'server.oauth.noCode': 'The pasted address has no code in it: copy the whole address from the browser\'s address bar.',
  'server.oauth.otherRedirect': 'The pasted address is not the redirect address this sign-in used. Copy it from the tab that opened after you allowed access.',
  'server.oauth.otherAccount': 'That address answers the sign-in of another account. Click "Sign in to Lock Access" in this account\'s row again.',
  'server.linkState.linked': 'Linked.',
  'server.linkState.relink': 'Link the account again.',
  'server.linkState.unlinked': 'Unlinked: link your Lock Access account below to resume.',
  'server.linkState.neverLinked': 'Not linked yet: link your Lock Access account below.',
  'server.linkState.unreadable': 'The stored tokens cannot be read ({reason}). Link the account again.',
} as const;

export const serverMessage = messageCatalog(SERVER_MESSAGES);
