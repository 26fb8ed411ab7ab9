import * as oauth from 'oauth4webapi';
import type { IntegrationProvider } from '../../core/oauth-catalog';
import { redactSecrets } from '../../core/redact';

// The authorization code flow with PKCE and `state` (RFC 6749, RFC 7636), the userinfo read and token
// revocation (RFC 7009), through oauth4webapi. Every call is bounded by `timeoutMs`.

export interface ClientSecrets {
  clientId: string;
  clientSecret: string | undefined;
}

export class OAuthFlowError extends Error {
  constructor(
    /** An OAuth error code (`access_denied`, `invalid_grant`) or ours (`server_error`). */
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'OAuthFlowError';
  }
}

const server = (p: IntegrationProvider): oauth.AuthorizationServer => ({
  issuer: p.issuer,
  authorization_endpoint: p.authorization_url,
  token_endpoint: p.token_url,
  revocation_endpoint: p.revocation_url,
  userinfo_endpoint: p.userinfo_url,
});

const clientOf = (secrets: ClientSecrets): oauth.Client => ({ client_id: secrets.clientId });

function clientAuth(p: IntegrationProvider, secrets: ClientSecrets): oauth.ClientAuth {
  if (p.token_auth_method === 'none' || !secrets.clientSecret) return oauth.None();
  return p.token_auth_method === 'client_secret_post'
    ? oauth.ClientSecretPost(secrets.clientSecret)
    : oauth.ClientSecretBasic(secrets.clientSecret);
}

/** Operator-configured endpoints may be plain http on loopback (the simulated provider, tests). */
const options = (timeoutMs: number) => ({ [oauth.allowInsecureRequests]: true, signal: AbortSignal.timeout(timeoutMs) });

export interface AuthorizationStart {
  url: string;
  state: string;
  codeVerifier: string;
}

export async function startAuthorization(
  p: IntegrationProvider,
  secrets: ClientSecrets,
  redirectUri: string,
  scopes: string[],
): Promise<AuthorizationStart> {
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(p.authorization_url);
  for (const [k, v] of Object.entries(p.authorization_params)) url.searchParams.set(k, v);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', secrets.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  if (scopes.length > 0) url.searchParams.set('scope', scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { url: url.href, state, codeVerifier };
}

export interface TokenSet {
  access_token: string;
  token_type: string;
  refresh_token?: string;
  id_token?: string;
  scope?: string;
  expires_in?: number;
  /** Claims of the ID token, when the provider sent one (checked: issuer, audience, times). */
  claims?: Record<string, unknown>;
}

/**
 * A failure as an OAuthFlowError whose message may be shown (a redirect's error_description, a
 * connection's revocation reason): the status and OAuth code, never a response body, and no form of
 * the secrets the request carried (`secrets`), in case a provider's text echoes them.
 */
const flowError = (error: unknown, secrets: (string | undefined)[]): OAuthFlowError => {
  const safe = (text: string) =>
    redactSecrets(
      text,
      secrets.filter((s): s is string => !!s),
    ).slice(0, 300);
  if (error instanceof OAuthFlowError) return new OAuthFlowError(error.code, safe(error.message));
  if (error instanceof oauth.AuthorizationResponseError)
    return new OAuthFlowError(error.error, safe(error.error_description ?? error.error));
  if (error instanceof oauth.ResponseBodyError)
    return new OAuthFlowError(error.error, `Token endpoint answered ${error.status} (${error.error})`);
  if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError')
    return new OAuthFlowError('temporarily_unavailable', 'The provider did not answer in time');
  return new OAuthFlowError('server_error', safe(`The provider's answer was not usable: ${(error as Error).message}`));
};

/** Checks the callback (state, `iss`, error) and exchanges the code; errors are OAuthFlowError. */
export async function finishAuthorization(
  p: IntegrationProvider,
  secrets: ClientSecrets,
  callback: URLSearchParams,
  expectedState: string,
  redirectUri: string,
  codeVerifier: string,
  timeoutMs: number,
): Promise<TokenSet> {
  try {
    const as = server(p);
    const client = clientOf(secrets);
    const params = oauth.validateAuthResponse(as, client, callback, expectedState);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth(p, secrets),
      params,
      redirectUri,
      codeVerifier,
      options(timeoutMs),
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response);
    const claims = result.id_token ? (oauth.getValidatedIdTokenClaims(result) as Record<string, unknown> | undefined) : undefined;
    return {
      access_token: result.access_token,
      token_type: result.token_type ?? 'bearer',
      refresh_token: result.refresh_token,
      id_token: result.id_token,
      scope: result.scope,
      expires_in: result.expires_in,
      claims,
    };
  } catch (error) {
    throw flowError(error, [secrets.clientSecret, codeVerifier]);
  }
}

export interface ExternalAccount {
  id: string;
  label: string;
}

/** Who the tokens belong to: the userinfo answer, else the ID token, else an account named after the token. */
export async function readAccount(
  p: IntegrationProvider,
  secrets: ClientSecrets,
  tokens: TokenSet,
  timeoutMs: number,
): Promise<ExternalAccount> {
  let claims: Record<string, unknown> | undefined = tokens.claims;
  if (p.userinfo_url) {
    try {
      const as = server(p);
      const response = await oauth.userInfoRequest(as, clientOf(secrets), tokens.access_token, options(timeoutMs));
      const expected = typeof claims?.sub === 'string' ? claims.sub : oauth.skipSubjectCheck;
      claims = (await oauth.processUserInfoResponse(as, clientOf(secrets), expected, response)) as Record<string, unknown>;
    } catch (error) {
      throw flowError(error, [secrets.clientSecret, tokens.access_token, tokens.refresh_token]);
    }
  }
  const text = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  const id = text(claims?.sub);
  if (!id) throw new OAuthFlowError('server_error', 'The provider did not say which account was connected');
  const label = text(claims?.email) ?? text(claims?.preferred_username) ?? text(claims?.name) ?? id;
  return { id: id.slice(0, 500), label: label.slice(0, 500) };
}

/** Revokes a token at the provider (RFC 7009); false when the provider has no revocation endpoint. */
export async function revokeToken(
  p: IntegrationProvider,
  secrets: ClientSecrets,
  token: string,
  hint: 'refresh_token' | 'access_token',
  timeoutMs: number,
): Promise<boolean> {
  if (!p.revocation_url) return false;
  try {
    const response = await oauth.revocationRequest(server(p), clientOf(secrets), clientAuth(p, secrets), token, {
      ...options(timeoutMs),
      additionalParameters: { token_type_hint: hint },
    });
    await oauth.processRevocationResponse(response);
    return true;
  } catch (error) {
    throw flowError(error, [secrets.clientSecret, token]);
  }
}
