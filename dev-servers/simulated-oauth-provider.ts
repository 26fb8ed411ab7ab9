import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';
import { SIMULATED_CLIENT_ID, SIMULATED_SCOPES } from '../platform/core/oauth-catalog';

// The `simulated` integration: a real OAuth 2.0 / OpenID Connect server (npm oidc-provider) on
// loopback, with one consent page of its own. `npm start` runs it for the embedded defaults; tests run
// it as the provider their connect flows talk to. It signs in a simulated account (the `login_hint`
// names it, default `simulated-user`) and grants nothing outside this machine.

export interface SimulatedProviderOptions {
  port?: number;
  host?: string;
  /** Where the built-in public client may be sent back (the service's /integrations/oauth/callback). */
  redirectUris: string[];
  /** More clients (confidential ones, for tests of the configured-provider path). */
  clients?: ClientMetadata[];
  accessTokenTtlSeconds?: number;
}

export interface SimulatedProvider {
  issuer: string;
  provider: Provider;
  /** Method and path of every request the server received (tests look for revocations). */
  requests: { method: string; path: string }[];
  close(): Promise<void>;
}

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string; consumed?: number };

/**
 * The provider's storage: in memory, one store per server (a restart forgets every grant, and the
 * connections made with them then need a reconnect, as with a real provider that revoked them).
 */
function memoryAdapterFactory() {
  const store = new Map<string, { payload: Payload; expiresAt: number | undefined }>();
  const live = (key: string) => {
    const entry = store.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) store.delete(key);
    return store.get(key)?.payload;
  };
  return (name: string) => ({
    async upsert(id: string, payload: Payload, expiresIn?: number) {
      store.set(`${name}:${id}`, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : undefined });
    },
    async find(id: string) {
      return live(`${name}:${id}`);
    },
    async findByUid(uid: string) {
      for (const [key, entry] of store) if (key.startsWith(`${name}:`) && entry.payload.uid === uid) return live(key);
      return undefined;
    },
    async findByUserCode(userCode: string) {
      for (const [key, entry] of store) if (key.startsWith(`${name}:`) && entry.payload.userCode === userCode) return live(key);
      return undefined;
    },
    async consume(id: string) {
      const entry = store.get(`${name}:${id}`);
      if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
    },
    async destroy(id: string) {
      store.delete(`${name}:${id}`);
    },
    async revokeByGrantId(grantId: string) {
      for (const [key, entry] of store) if (entry.payload.grantId === grantId) store.delete(key);
    },
  });
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const describe = new Map(SIMULATED_SCOPES.map((s) => [s.name, s.description]));

function consentPage(uid: string, client: string, account: string, scopes: string[]): string {
  const items = scopes.map((s) => `<li><code>${escapeHtml(s)}</code> ${escapeHtml(describe.get(s) ?? '')}</li>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Simulated provider: consent</title></head><body style="font-family:system-ui;max-width:32rem;margin:3rem auto">
<p><strong>Simulated provider</strong> (built in; nothing real is shared)</p>
<h1>Allow ${escapeHtml(client)}?</h1><p>Signed in as <strong>${escapeHtml(account)}</strong>. It asks for:</p><ul>${items}</ul>
<form method="post" action="/interaction/${escapeHtml(uid)}/confirm"><button id="allow" type="submit">Allow</button></form>
<form method="post" action="/interaction/${escapeHtml(uid)}/abort"><button id="deny" type="submit">Deny</button></form>
</body></html>`;
}

export async function startSimulatedOAuthProvider(options: SimulatedProviderOptions): Promise<SimulatedProvider> {
  const host = options.host ?? '127.0.0.1';
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject); // a taken port fails the start instead of throwing outside it
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const issuer = `http://${host}:${port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'simulated', alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    adapter: memoryAdapterFactory(),
    clients: [
      {
        client_id: SIMULATED_CLIENT_ID,
        client_name: 'Voice CRM',
        token_endpoint_auth_method: 'none',
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
      ...(options.clients ?? []),
    ],
    jwks: { keys: [jwk as never] },
    cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
    scopes: ['openid', 'offline_access', ...SIMULATED_SCOPES.map((s) => s.name).filter((s) => s !== 'openid')],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: {
      devInteractions: { enabled: false },
      // A client revokes only its own tokens.
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
    },
    pkce: { required: () => true },
    // Connections refresh for as long as the grant lives, whatever the browser session does.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    expiresWithSession: async () => false,
    ttl: {
      AccessToken: options.accessTokenTtlSeconds ?? 3600,
      IdToken: 3600,
      RefreshToken: 30 * 86400,
      Grant: 30 * 86400,
      Session: 86400,
      Interaction: 600,
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, sub) {
      return {
        accountId: sub,
        claims: async () => ({ sub, email: `${sub}@simulated.invalid`, email_verified: true, name: `Simulated account ${sub}` }),
      };
    },
  });
  const handle = provider.callback();
  const requests: SimulatedProvider['requests'] = [];

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', issuer);
    requests.push({ method: req.method ?? 'GET', path: url.pathname });
    const match = /^\/interaction\/([\w-]+)(?:\/(confirm|abort))?$/.exec(url.pathname);
    if (!match) return void handle(req, res);
    void interaction(req, res, match[2]).catch((error: Error) => {
      if (res.headersSent) return;
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`Simulated provider: ${error.message}`);
    });
  });

  async function interaction(req: http.IncomingMessage, res: http.ServerResponse, action: string | undefined): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params, uid } = details;
    if (prompt.name === 'login') {
      // No password: the simulated account is the one the request hints at.
      const accountId =
        typeof params.login_hint === 'string' && /^[\w.@-]{1,64}$/.test(params.login_hint) ? params.login_hint : 'simulated-user';
      return void (await provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false }));
    }
    if (action === 'abort') {
      return void (await provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'The user denied access' },
        { mergeWithLastSubmission: false },
      ));
    }
    const accountId = details.session?.accountId ?? 'simulated-user';
    if (action !== 'confirm' || req.method !== 'POST') {
      const client = await provider.Client.find(String(params.client_id));
      const scopes = String(params.scope ?? '')
        .split(' ')
        .filter(Boolean);
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      return void res.end(consentPage(uid, client?.clientName ?? String(params.client_id), accountId, scopes));
    }
    const missing = prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId, clientId: String(params.client_id) });
    if (!grant) throw new Error('grant not found');
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  return {
    issuer,
    provider,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
