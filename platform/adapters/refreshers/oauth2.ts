import { z } from 'zod';
import { redactSecrets } from '../../core/redact';
import { WebFetchError } from '../web/guarded-http';
import type { SafeHttp } from './http';
import { RefreshError, type Refresher, type RefreshResult } from './types';

// OAuth 2.0 token requests (RFC 6749): the refresh-token grant (section 6) and the client-credentials
// grant (section 4.4). Client id, scope and token URL are refresh input; client secret and refresh
// token live in the credential's value.

const AuthMethod = z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic');
const TokenUrl = z.url({ protocol: /^https?$/ }).max(2000);

const RefreshTokenInput = z.strictObject({
  token_url: TokenUrl,
  client_id: z.string().min(1).max(500).optional(),
  scope: z.string().max(2000).optional(),
  auth_method: AuthMethod,
});

const ClientCredentialsInput = z.strictObject({
  token_url: TokenUrl,
  client_id: z.string().min(1).max(500),
  scope: z.string().max(2000).optional(),
  audience: z.string().max(2000).optional(),
  auth_method: AuthMethod,
});

const TokenResponse = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.union([z.number(), z.string().regex(/^\d+$/)]).optional(),
  refresh_token: z.string().min(1).optional(),
  scope: z.string().optional(),
  id_token: z.string().optional(),
});

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * The server's `error_description`, fit to store and show: stripped of every form of what the request
 * carried (a server may echo the request), cut to RFC 6749's characters (printable ASCII but `"` and
 * `\`) and to 200 of them.
 */
function safeDescription(raw: unknown, sent: string[]): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const text = redactSecrets(raw, sent)
    .replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]+/g, ' ')
    .trim();
  return text ? text.slice(0, 200) : undefined;
}

/**
 * One token request; any failure becomes a RefreshError that keeps the HTTP status, the OAuth `error`
 * code and a scrubbed `error_description`, never the rest of the response body.
 */
export async function tokenRequest(
  http: SafeHttp,
  input: { token_url: string; client_id?: string; auth_method: 'client_secret_basic' | 'client_secret_post' },
  clientSecret: string | undefined,
  params: Record<string, string>,
  now: Date,
): Promise<RefreshResult> {
  const form = new URLSearchParams(params);
  const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
  if (input.client_id && clientSecret && input.auth_method === 'client_secret_basic') {
    const pair = `${encodeURIComponent(input.client_id)}:${encodeURIComponent(clientSecret)}`;
    headers.Authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    if (input.client_id) form.set('client_id', input.client_id);
    if (clientSecret) form.set('client_secret', clientSecret);
  }
  let response: Awaited<ReturnType<typeof http>>;
  try {
    response = await http({ method: 'POST', url: input.token_url, headers, body: form.toString() });
  } catch (error) {
    if (error instanceof WebFetchError) throw new RefreshError(`Token endpoint: ${error.message}`, error.retryable);
    throw error;
  }
  if (response.status < 200 || response.status >= 300) {
    const body = (response.json ?? {}) as Record<string, unknown>;
    // The OAuth error code is a registered short word; the description is the server's, scrubbed of what we sent.
    const code = typeof body.error === 'string' ? /^[\w.-]{1,64}$/.exec(body.error)?.[0] : undefined;
    const sent = [clientSecret, params.refresh_token].filter((v): v is string => !!v);
    const description = safeDescription(body.error_description, sent);
    const detail = [code, description].filter(Boolean).join(': ');
    const retryable = response.status >= 500 || response.status === 429;
    throw new RefreshError(`Token endpoint answered ${response.status}${detail ? ` (${detail})` : ''}`, retryable);
  }
  const parsed = TokenResponse.safeParse(response.json);
  if (!parsed.success) throw new RefreshError('Token endpoint answered without an access_token', false);
  const token = parsed.data;
  const value: Record<string, unknown> = { access_token: token.access_token, token_type: token.token_type ?? 'Bearer' };
  if (token.refresh_token) value.refresh_token = token.refresh_token; // rotated; otherwise the old one stays
  if (token.scope) value.scope = token.scope;
  if (token.id_token) value.id_token = token.id_token;
  const expiresIn = token.expires_in === undefined ? undefined : Number(token.expires_in);
  return { value, expiresAt: expiresIn === undefined ? null : new Date(now.getTime() + expiresIn * 1000) };
}

export function oauth2RefreshTokenRefresher(id: string): Refresher {
  return {
    id,
    kind: 'oauth2_refresh_token',
    name: 'OAuth 2.0 refresh token',
    description:
      "Exchanges the value's refresh_token at token_url (grant_type=refresh_token) for a new access_token; " +
      'client_id from the input or the value, client_secret from the value; a rotated refresh_token replaces the old one.',
    inputSchema: RefreshTokenInput,
    async refresh({ input, value, now, http }) {
      const i = RefreshTokenInput.parse(input);
      const refreshToken = text(value.refresh_token);
      if (!refreshToken) throw new RefreshError('The value has no refresh_token', false);
      const clientId = i.client_id ?? text(value.client_id);
      const params: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken };
      if (i.scope) params.scope = i.scope;
      return tokenRequest(http, { ...i, client_id: clientId }, text(value.client_secret), params, now);
    },
  };
}

export function oauth2ClientCredentialsRefresher(id: string): Refresher {
  return {
    id,
    kind: 'oauth2_client_credentials',
    name: 'OAuth 2.0 client credentials',
    description:
      'Requests an access_token at token_url (grant_type=client_credentials) with client_id from the input and client_secret from the value.',
    inputSchema: ClientCredentialsInput,
    async refresh({ input, value, now, http }) {
      const i = ClientCredentialsInput.parse(input);
      const secret = text(value.client_secret);
      if (!secret) throw new RefreshError('The value has no client_secret', false);
      const params: Record<string, string> = { grant_type: 'client_credentials' };
      if (i.scope) params.scope = i.scope;
      if (i.audience) params.audience = i.audience;
      return tokenRequest(http, i, secret, params, now);
    },
  };
}
