// Why something failed, as the code the page words: told apart by class name, status and code,
// never by the error's English; an OAuth refusal keeps the standard's own code.
import { describe, expect, it } from 'vitest';

import { AuthorizationLostError, RefreshRejectedError, RequestRejectedError, TransientError } from '../../src/cloud/http/errors.js';
import { reasonOf } from '../../src/util/reason-messages.js';

const withCode = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });

describe('reasonOf', () => {
  it('an OAuth refusal is reason.refused with its error code, in no language', () => {
    expect(reasonOf(new RefreshRejectedError('The service did not accept the authorization code: the service refused it (invalid_grant).', 'invalid_grant'))).toMatchObject({ code: 'reason.refused', params: { oauthError: 'invalid_grant' }, text: 'the service refused it (invalid_grant)' });
  });

  it('a refusal whose error is not a code of the standard (words, or none) falls back to its status', () => {
    expect(reasonOf(new RefreshRejectedError('refused', 'Der Code ist ungültig'))).toMatchObject({ code: 'reason.httpStatus', params: { status: 400 } });
    expect(reasonOf(new RefreshRejectedError('refused'))).toMatchObject({ code: 'reason.httpStatus', params: { status: 400 } });
    expect(reasonOf(new RequestRejectedError('the client id was refused', 401))).toMatchObject({ code: 'reason.httpStatus', params: { status: 401 } });
  });

  it('network, certificate and file errors by their code, found in a cause too', () => {
    expect(reasonOf(withCode('ECONNREFUSED'))).toMatchObject({ code: 'reason.network', params: { errorCode: 'ECONNREFUSED' } });
    expect(reasonOf(new TransientError('fetch failed', undefined, { cause: withCode('CERT_HAS_EXPIRED') }))).toMatchObject({ code: 'reason.tls', params: { errorCode: 'CERT_HAS_EXPIRED' } });
    expect(reasonOf(withCode('EACCES'))).toMatchObject({ code: 'reason.file', params: { errorCode: 'EACCES' } });
    expect(reasonOf(withCode('ETIMEDOUT'))).toMatchObject({ code: 'reason.timeout' });
  });

  it('classes the page has words for, and anything else as reason.other', () => {
    expect(reasonOf(new AuthorizationLostError('401'))).toMatchObject({ code: 'reason.tokenRefused' });
    expect(reasonOf(new SyntaxError('Unexpected token n in JSON at position 1'))).toMatchObject({ code: 'reason.other', params: {} });
    expect(reasonOf('a string thrown')).toMatchObject({ code: 'reason.other' });
  });
});
