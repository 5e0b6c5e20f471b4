// {auth_url}: the token endpoint (refresh and authorization-code grants) and the consent page.
import type { FastifyInstance } from 'fastify';
import type { SimAccount } from './accounts.js';
import type { SimCore } from './core.js';
import { dropConnection } from './http-app.js';

type Form = Record<string, string | undefined>;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' })[c] ?? c);
}

function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

function validRedirect(uri: string | undefined): uri is string {
  if (!uri) return false;
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** With several accounts on one client, the person signing in says which one (preselected: login_hint). */
function accountChoice(accounts: SimAccount[], chosen: SimAccount): string {
  if (accounts.length < 2) return '';
  const options = accounts.map((a) => `<label><input type="radio" name="account" value="${escapeHtml(a.id)}"${a.id === chosen.id ? ' checked' : ''}> ${escapeHtml(a.name)} (${escapeHtml(a.id)})</label><br>`).join('');
  return `<fieldset><legend>Sign in as</legend>${options}</fieldset>`;
}

function consentPage(q: Form, accounts: SimAccount[], chosen: SimAccount): string {
  const hidden = ['response_type', 'client_id', 'redirect_uri', 'state']
    .map((k) => `<input type="hidden" name="${k}" value="${escapeHtml(q[k] ?? '')}">`).join('')
    + (accounts.length < 2 ? `<input type="hidden" name="account" value="${escapeHtml(chosen.id)}">` : '');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lock Access: allow access</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}button{font-size:1rem;padding:.5rem 1.5rem;margin-right:.5rem}</style>
</head><body><h1>Allow access?</h1>
<p>The application <strong>${escapeHtml(q.client_id ?? '')}</strong> asks to operate your locks and doorbells and receive their events.</p>
<p>(Lock Access service simulator: test account, no password needed.)</p>
<form method="post" action="authorization">${hidden}${accountChoice(accounts, chosen)}
<button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button></form></body></html>`;
}

export function registerOAuthRoutes(app: FastifyInstance, core: SimCore): void {
  // RFC 6749 4.1.1: errors about client_id / redirect_uri are shown, never redirected.
  const checkAuthorizationRequest = (q: Form): string | undefined => {
    if (!core.tokens.isKnownClient(q.client_id)) return 'unknown client_id';
    if (!validRedirect(q.redirect_uri)) return 'redirect_uri must be an absolute http(s) URL';
    return undefined;
  };

  /** Who signs in: the account named (form field `account`, or `login_hint`) among the client's, else its first. */
  const signedIn = (q: Form): { accounts: SimAccount[]; chosen: SimAccount } => {
    const accounts = core.accounts.ofClient(q.client_id);
    const named = q.account ?? q.login_hint;
    const chosen = accounts.find((a) => a.id === named) ?? accounts[0] ?? core.account;
    return { accounts, chosen };
  };

  app.get('/oauth/authorization', async (request, reply) => {
    const q = request.query as Form;
    const problem = checkAuthorizationRequest(q);
    if (problem) return reply.code(400).type('text/html').send(`<!doctype html><p>Invalid authorization request: ${escapeHtml(problem)}</p>`);
    const redirectUri = q.redirect_uri as string;
    if (q.response_type !== 'code') return reply.redirect(redirectWith(redirectUri, { error: 'unsupported_response_type', state: q.state }), 302);
    const { accounts, chosen } = signedIn(q);
    if (q.auto === '1') {
      const code = core.tokens.createAuthorizationCode(q.client_id as string, redirectUri, chosen.userId);
      return reply.redirect(redirectWith(redirectUri, { code, state: q.state }), 302);
    }
    return reply.type('text/html').send(consentPage(q, accounts, chosen));
  });

  app.post('/oauth/authorization', async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const problem = checkAuthorizationRequest(form);
    if (problem) return reply.code(400).type('text/html').send(`<!doctype html><p>Invalid authorization request: ${escapeHtml(problem)}</p>`);
    const redirectUri = form.redirect_uri as string;
    if (form.response_type !== 'code') return reply.redirect(redirectWith(redirectUri, { error: 'unsupported_response_type', state: form.state }), 302);
    if (form.decision !== 'allow') return reply.redirect(redirectWith(redirectUri, { error: 'access_denied', state: form.state }), 302);
    const code = core.tokens.createAuthorizationCode(form.client_id as string, redirectUri, signedIn(form).chosen.userId);
    return reply.redirect(redirectWith(redirectUri, { code, state: form.state }), 302);
  });

  app.post('/oauth/access_token', async (request, reply) => {
    const contentType = request.headers['content-type'] ?? '';
    if (!contentType.startsWith('application/x-www-form-urlencoded')) {
      return reply.code(400).send({ error: 'invalid_request', error_description: 'the request body must be form URL-encoded' });
    }
    const form = (request.body ?? {}) as Form;
    void reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (form.grant_type === 'refresh_token') {
      const refusal = core.faults.takeGrantRefusal();
      if (refusal) return reply.code(400).type(typeof refusal.body === 'string' ? 'text/plain' : 'application/json').send(typeof refusal.body === 'string' ? refusal.body : JSON.stringify(refusal.body));
      const result = core.tokens.grantRefresh(form);
      if (!result.ok) return reply.code(400).send(result.body);
      // Fault: the rotation is committed (old token used, new one stored), then the reply is lost.
      const fail = core.faults.takeRotateFail();
      if (fail === 'drop') return dropConnection(request, reply);
      if (fail === '500') return reply.code(500).send({ error: 'server_error', error_description: 'simulated failure after rotation' });
      return reply.send(result.body);
    }
    if (form.grant_type === 'authorization_code') {
      const result = core.tokens.grantAuthorizationCode(form);
      return reply.code(result.ok ? 200 : 400).send(result.body);
    }
    return reply.code(400).send({
      error: form.grant_type ? 'unsupported_grant_type' : 'invalid_request',
      error_description: form.grant_type ? 'grant_type must be refresh_token or authorization_code' : 'grant_type is required',
    });
  });
}
