import crypto from 'node:crypto';
import * as credentialsDb from '../../db/credentials';
import * as db from '../../db/integrations';
import type { ConnectTokenRow } from '../../db/integrations';
import type { RefreshPolicy } from '../../domain/credentials';
import { invalid } from '../../domain/errors';
import {
  CONNECT_TOKEN_PATTERN,
  CONNECT_TOKEN_PREFIX,
  REFRESH_LEAD_SECONDS,
  REFUSAL_TEXT,
  connectionCredentialName,
  grantedScopes,
  originAllowed,
  renderConnectPage,
  renderErrorPage,
  tokenRefusal,
} from '../../domain/integrations';
import { publicBaseUrl, type Config } from '../../platform/core/config';
import { newId } from '../../platform/core/ids';
import { requestedScopes, type IntegrationProvider } from '../../platform/core/oauth-catalog';
import {
  OAuthFlowError,
  finishAuthorization,
  readAccount,
  startAuthorization,
  type ClientSecrets,
} from '../../platform/adapters/oauth/client';
import { INTEGRATION_REFRESHER_ID } from '../../platform/adapters/oauth/refresher';
import { createCredential, deleteCredential, setCredentialValue, updateCredential } from '../credentials/crud';
import type { ServiceDeps } from '../deps';
import { catalogOf, clientFor, getSettings } from './catalog';
import { connectionNotFound } from './connections';

// Connect tokens and the consent they start: the connect page, the redirect to the provider, and its
// callback, which stores the connection with its tokens in a workflow credential (sealed, refreshed by
// the credentials area's refresher workflow on a before-expiry schedule).

export const CALLBACK_PATH = '/integrations/oauth/callback';
/** How long a started consent may take before its callback is refused. */
const CONSENT_WINDOW_MS = 15 * 60_000;

const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

export interface ConnectTokenInput {
  allowed_integrations: string[];
  end_user_id?: string;
  connection_id?: string;
  success_url: string;
  error_url: string;
}

export async function createConnectToken(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  caller: { actor: string; userId: string | null },
  input: ConnectTokenInput,
) {
  const catalog = catalogOf(deps.config);
  const allowed = [...new Set(input.allowed_integrations)];
  for (const key of allowed) {
    const p = catalog.get(key);
    if (!p) throw invalid(`Unknown integration: ${key}`);
    if (!(await clientFor(deps, orgId, p)))
      throw invalid(
        `Integration ${key} needs the organization's OAuth client: a workflow credential named integration-client:${key} with client_id and client_secret`,
      );
  }
  const { allowed_redirect_origins } = await getSettings(deps, orgId);
  for (const field of ['success_url', 'error_url'] as const) {
    if (!originAllowed(input[field], allowed_redirect_origins))
      throw invalid(`${field} must be on an allowed origin: ${allowed_redirect_origins.join(', ')}`);
  }
  if (input.connection_id) {
    const connection = await db.getConnection(deps.sql, orgId, input.connection_id);
    if (!connection) throw connectionNotFound();
    if (!allowed.includes(connection.integration))
      throw invalid(`allowed_integrations must include the connection's integration ${connection.integration}`);
  }
  const token = `${CONNECT_TOKEN_PREFIX}${crypto.randomBytes(32).toString('base64url')}`;
  await db.pruneConnectTokens(deps.sql, orgId);
  const row = await db.insertConnectToken(deps.sql, orgId, newId(), {
    tokenHash: hashToken(token),
    allowedIntegrations: allowed,
    endUserId: input.end_user_id ?? null,
    connectionId: input.connection_id ?? null,
    successUrl: input.success_url,
    errorUrl: input.error_url,
    createdBy: caller.actor,
    createdByUserId: caller.userId,
    ttlSeconds: deps.config.CONNECT_TOKEN_TTL_SECONDS,
  });
  return { token, expires_at: row.expires_at.toISOString(), connect_url: `${publicBaseUrl(deps.config)}/integrations/connect/${token}` };
}

// ---- the consent: connect page, start, callback -------------------------------------------------------

/** What an unauthenticated connect route answers: an HTML page, or a redirect. */
export type Page<S extends number> = { kind: 'page'; status: S; html: string };
export type PageResult = Page<200 | 400 | 404 | 410>;
export type ConsentResult = Page<400 | 404 | 410> | { kind: 'redirect'; location: string };

const refusalPage = (refusal: 'unknown' | 'expired' | 'used'): Page<404 | 410> => ({
  kind: 'page',
  status: refusal === 'unknown' ? 404 : 410,
  html: renderErrorPage(
    refusal === 'unknown' ? 'Link not valid' : refusal === 'expired' ? 'Link expired' : 'Link already used',
    REFUSAL_TEXT[refusal],
  ),
});

async function usableToken(deps: Pick<ServiceDeps, 'sql'>, token: string): Promise<ConnectTokenRow | Page<404 | 410>> {
  const row = CONNECT_TOKEN_PATTERN.test(token) ? await db.findConnectTokenByHash(deps.sql, hashToken(token)) : undefined;
  const refusal = tokenRefusal(row, new Date());
  return refusal ? refusalPage(refusal) : row!;
}

export async function connectPage(deps: Pick<ServiceDeps, 'sql' | 'config'>, token: string): Promise<PageResult> {
  const row = await usableToken(deps, token);
  if ('kind' in row) return row;
  const catalog = catalogOf(deps.config);
  const choices = row.allowed_integrations.flatMap((key) => {
    const p = catalog.get(key);
    if (!p) return [];
    const href = `${publicBaseUrl(deps.config)}/integrations/connect/${token}/authorize?integration=${encodeURIComponent(key)}`;
    return [{ key, name: p.name, description: p.description, simulated: p.simulated, scopes: requestedScopes(p), href }];
  });
  if (choices.length === 0)
    return {
      kind: 'page',
      status: 400,
      html: renderErrorPage('Nothing to connect', 'None of the integrations of this link is offered any more.'),
    };
  return { kind: 'page', status: 200, html: renderConnectPage(choices, row.connection_id !== null) };
}

const callbackUrl = (config: Config) => `${publicBaseUrl(config)}${CALLBACK_PATH}`;

/** Spends the token and sends the browser to the provider's consent. */
export async function startConsent(deps: Pick<ServiceDeps, 'sql' | 'config'>, token: string, integration: string): Promise<ConsentResult> {
  const row = await usableToken(deps, token);
  if ('kind' in row) return row;
  const p = catalogOf(deps.config).get(integration);
  if (!p || !row.allowed_integrations.includes(integration))
    return { kind: 'page', status: 400, html: renderErrorPage('Integration not offered', 'This link does not offer that integration.') };
  const secrets = await clientFor(deps, row.org_id, p);
  if (!secrets)
    return {
      kind: 'page',
      status: 400,
      html: renderErrorPage('Integration not available', 'The organization has not configured this integration.'),
    };
  const start = await startAuthorization(p, secrets, callbackUrl(deps.config), requestedScopes(p));
  const spent = await db.spendConnectToken(deps.sql, row.org_id, row.id, {
    integration,
    state: start.state,
    codeVerifier: start.codeVerifier,
  });
  if (!spent) return refusalPage('used');
  return { kind: 'redirect', location: start.url };
}

const withParams = (base: string, params: Record<string, string>) => {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
};

/** The provider's callback: exchanges the code, stores the tokens, sends the browser to success_url or error_url. */
export async function finishConsent(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal' | 'logger'>,
  query: Record<string, string | undefined>,
): Promise<ConsentResult> {
  const state = query.state;
  if (!state)
    return {
      kind: 'page',
      status: 400,
      html: renderErrorPage('Missing state', 'This address is reached from a provider, with the state it was given.'),
    };
  const row = await db.claimCallback(deps.sql, state);
  if (!row) return refusalPage('unknown');
  if (row.completed_at) return refusalPage('used');
  // The consent itself must finish within a bound of its start, whatever the token's own expiry.
  if (!row.used_at || Date.now() - row.used_at.getTime() > CONSENT_WINDOW_MS) return refusalPage('expired');
  const fail = (code: string, description: string): ConsentResult => ({
    kind: 'redirect',
    location: withParams(row.error_url, {
      error: code,
      error_description: description,
      ...(row.connection_id ? { connection_id: row.connection_id } : {}),
    }),
  });
  const p = catalogOf(deps.config).get(row.integration!);
  const secrets = p ? await clientFor(deps, row.org_id, p) : undefined;
  if (!p || !secrets || !row.code_verifier) return fail('server_error', 'The integration is no longer available');
  const timeout = deps.config.INTEGRATION_HTTP_TIMEOUT_MS;
  try {
    const params = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
    const tokens = await finishAuthorization(p, secrets, params, state, callbackUrl(deps.config), row.code_verifier, timeout);
    const account = await readAccount(p, secrets, tokens, timeout);
    const connectionId = await storeConnection(deps, row, p, secrets, tokens, account);
    deps.logger.info({ orgId: row.org_id, connectionId, integration: p.key }, 'integration connected');
    return { kind: 'redirect', location: withParams(row.success_url, { connection_id: connectionId, integration: p.key }) };
  } catch (error) {
    if (error instanceof OAuthFlowError) {
      deps.logger.warn({ orgId: row.org_id, integration: p.key, code: error.code }, 'integration consent failed');
      return fail(error.code, error.message);
    }
    // Storing failed (Temporal or Postgres unreachable): the browser still goes back, never to a stack trace.
    deps.logger.error({ orgId: row.org_id, integration: p.key, err: error }, 'integration connection could not be stored');
    return fail('temporarily_unavailable', 'The connection could not be stored; try again with a new link');
  }
}

type Tokens = Awaited<ReturnType<typeof finishAuthorization>>;

const refreshPolicyFor = (tokens: Tokens): RefreshPolicy =>
  tokens.refresh_token ? { type: 'before_expiry', lead_seconds: REFRESH_LEAD_SECONDS } : { type: 'manual' };

/** The connection's credential value: tokens, the integration they belong to, and an organization client's secret. */
function credentialValue(p: IntegrationProvider, secrets: ClientSecrets, tokens: Tokens): Record<string, unknown> {
  const value: Record<string, unknown> = { integration: p.key, access_token: tokens.access_token, token_type: tokens.token_type };
  if (tokens.refresh_token) value.refresh_token = tokens.refresh_token;
  if (tokens.id_token) value.id_token = tokens.id_token;
  if (tokens.scope) value.scope = tokens.scope;
  if (p.client_source === 'organization') {
    value.client_id = secrets.clientId;
    if (secrets.clientSecret) value.client_secret = secrets.clientSecret;
  }
  return value;
}

async function storeConnection(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>,
  token: ConnectTokenRow,
  p: IntegrationProvider,
  secrets: ClientSecrets,
  tokens: Tokens,
  account: { id: string; label: string },
): Promise<string> {
  const orgId = token.org_id;
  const scopes = grantedScopes(tokens.scope, requestedScopes(p));
  const expiresAt = tokens.expires_in !== undefined ? new Date(Date.now() + tokens.expires_in * 1000).toISOString() : null;
  const value = credentialValue(p, secrets, tokens);
  // A reconnect names its connection; consent to an account the organization already connected is one too.
  const existingId = token.connection_id ?? (await db.findConnectionByAccount(deps.sql, orgId, p.key, account.id));
  if (existingId) {
    const existing = await db.getConnection(deps.sql, orgId, existingId);
    if (!existing) throw new OAuthFlowError('server_error', 'The connection to reconnect no longer exists');
    if (existing.external_account_id !== account.id)
      throw new OAuthFlowError('account_mismatch', `Reconnect with the same account (${existing.external_account_label})`);
    let credentialId = existing.credential_id;
    if (credentialId) {
      await setCredentialValue(deps, orgId, credentialId, value, expiresAt, {
        source: 'input',
        actor: token.created_by,
        merge: false,
      });
      await updateCredential(deps, orgId, token.created_by, credentialId, { refresh_policy: refreshPolicyFor(tokens) });
      // The failure that asked for this reconnect is history now: fresh tokens, no stale error shown.
      await credentialsDb.clearRefreshOutcome(deps.sql, orgId, credentialId);
    } else {
      credentialId = (await createTokenCredential(deps, orgId, token.created_by, p, existing.id, account, value, expiresAt, tokens)).id;
    }
    await db.reactivateConnection(deps.sql, orgId, existing.id, {
      externalAccountLabel: account.label,
      grantedScopes: scopes,
      connectedBy: token.created_by,
      credentialId,
      endUserId: token.end_user_id,
    });
    return existing.id;
  }
  const id = newId();
  const credential = await createTokenCredential(deps, orgId, token.created_by, p, id, account, value, expiresAt, tokens);
  try {
    await db.insertConnection(deps.sql, orgId, id, {
      integration: p.key,
      externalAccountId: account.id,
      externalAccountLabel: account.label,
      grantedScopes: scopes,
      endUserId: token.end_user_id,
      connectedBy: token.created_by,
      credentialId: credential.id,
    });
  } catch (error) {
    // No credential without its connection (and its schedule goes with it).
    await deleteCredential(deps, orgId, credential.id).catch(() => {});
    throw error;
  }
  return id;
}

function createTokenCredential(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>,
  orgId: string,
  actor: string,
  p: IntegrationProvider,
  connectionId: string,
  account: { label: string },
  value: Record<string, unknown>,
  expiresAt: string | null,
  tokens: Tokens,
) {
  return createCredential(deps, orgId, actor, {
    name: connectionCredentialName(p.key, connectionId),
    description: `Tokens of the ${p.name} connection ${account.label}`.slice(0, 1000),
    refresher_workflow_id: INTEGRATION_REFRESHER_ID,
    refresh_input: { integration: p.key },
    refresh_policy: refreshPolicyFor(tokens),
    value,
    expires_at: expiresAt,
  });
}
