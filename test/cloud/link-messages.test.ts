import { describe, expect, it } from 'vitest';

import { LINK_MESSAGES, linkMessage, messageOfSentence } from '../../src/cloud/link-messages.js';
import { NOT_LINKED_MESSAGE, notSavedMessage, RELINK_MESSAGE, UNCERTAIN_MESSAGE } from '../../src/cloud/tokens/token-session.js';
import { LEGACY_MESSAGE_CODE } from '../../src/util/ui-message.js';

describe('the link\'s sentences as message codes: the page words the code, the log keeps the English', () => {
  it('the token jobs\' sentences are the templates of their codes', () => {
    expect(NOT_LINKED_MESSAGE).toBe(LINK_MESSAGES['link.notLinked']);
    expect(UNCERTAIN_MESSAGE).toBe(LINK_MESSAGES['link.uncertain']);
    expect(RELINK_MESSAGE).toBe(`Lock Access needs you to link your account again. ${LINK_MESSAGES['link.advice']}`);
    expect(notSavedMessage('ENOSPC')).toBe(linkMessage('link.notSaved', { reason: 'ENOSPC' }).text);
    expect(notSavedMessage('ENOSPC')).toMatch(/^The renewed tokens are in use but not saved yet \(ENOSPC\)\./);
  });

  it('a sentence kept in the token file, also one an earlier version wrote, becomes its code again', () => {
    expect(messageOfSentence(UNCERTAIN_MESSAGE)).toEqual({ code: 'link.uncertain', params: {}, text: UNCERTAIN_MESSAGE });
    expect(messageOfSentence('The Lock Access service refused the stored refresh token (it is used, expired or revoked).')).toMatchObject({ code: 'link.refused', params: {} });
    expect(messageOfSentence('The service no longer accepts the access token and there is no refresh token left.')).toMatchObject({ code: 'link.accessLost.noRefreshToken' });
  });

  it('any other sentence shows as it is (the legacy code, which no catalog has)', () => {
    expect(messageOfSentence('clientSecret: the token service refused it.')).toEqual({ code: LEGACY_MESSAGE_CODE, params: {}, text: 'clientSecret: the token service refused it.' });
  });
});
