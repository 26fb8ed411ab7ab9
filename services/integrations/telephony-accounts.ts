import crypto from 'node:crypto';
import * as db from '../../db/integrations';
import * as telephonyDb from '../../db/telephony-accounts';
import type { ConnectionRow } from '../../db/integrations';
import { conflict, invalid, notFound, unauthenticated, unavailable, upstream } from '../../domain/errors';
import { TELEPHONY_PROVIDER_NAMES as PROVIDER_NAMES, connectionCredentialName, type TelephonyProvider } from '../../domain/integrations';
import {
  AccountRefused,
  configuredAccount,
  verifyAccount,
  type TelephonyAccountSettings,
  type TelephonyKeys,
} from '../../platform/adapters/dialers/accounts';
import { ProviderError } from '../../platform/adapters/dialers/http';
import { newId } from '../../platform/core/ids';
import { createCredential, deleteCredential, setCredentialValue } from '../credentials/crud';
import { readCredentialValue } from '../credentials/values';
import type { ServiceDeps } from '../deps';
import { announceNeedsReconnect, connectionView } from './connections';
import { catalogOf } from './catalog';

// An organization's own telephony account (Twilio or Vapi), connected with its API keys through the
// Integrations area (docs/decisions/telephony.md): the provider is asked whether the keys open an
// account before anything is stored; the keys sit sealed in the connection's workflow credential and
// are never echoed; a provider that later refuses them moves the connection to needs_reconnect (and its
// calls fail with a reason) until new keys are put. An organization without one uses the deployment's
// account (DIALER=twilio|vapi), or the simulated dialer where DIALER_SIMULATED_ALLOWED lets it.

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>;

export type TelephonyAccountInput =
  | { provider: 'twilio'; account_sid: string; auth_token: string; from_number?: string | null }
  | { provider: 'vapi'; api_key: string; phone_number_id: string };

/** How an organization's calls go out now. */
export type OrgTelephony =
  | { kind: 'account'; account: TelephonyAccountSettings }
  | { kind: 'simulated' }
  | { kind: 'none'; reason: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const keysOf = (input: TelephonyAccountInput): TelephonyKeys =>
  input.provider === 'twilio'
    ? { provider: 'twilio', account_sid: input.account_sid, auth_token: input.auth_token }
    : { provider: 'vapi', api_key: input.api_key, phone_number_id: input.phone_number_id };

/** The provider's word on the keys: 400 when it refuses them, 502 when it fails or does not answer. */
async function verify(deps: Pick<ServiceDeps, 'config'>, input: TelephonyAccountInput) {
  try {
    return await verifyAccount(deps.config, keysOf(input));
  } catch (error) {
    if (error instanceof AccountRefused) throw invalid(error.message);
    if (error instanceof ProviderError) throw upstream(`The telephony provider failed: ${error.message}`);
    throw error;
  }
}

/** The credential's value: the keys, and for Vapi the secret its server messages will carry (made here). */
function sealedValue(input: TelephonyAccountInput, before: Record<string, unknown> | null): Record<string, unknown> {
  if (input.provider === 'twilio')
    return { integration: 'twilio', account_sid: input.account_sid, auth_token: input.auth_token, from_number: input.from_number ?? null };
  const secret = typeof before?.webhook_secret === 'string' ? before.webhook_secret : crypto.randomBytes(32).toString('base64url');
  return { integration: 'vapi', api_key: input.api_key, phone_number_id: input.phone_number_id, webhook_secret: secret };
}

const view = (deps: Pick<ServiceDeps, 'config'>, row: ConnectionRow) => connectionView(row, catalogOf(deps.config));

/** Connects the organization's telephony account (one at a time: 409 while another is not revoked). */
export async function connectTelephonyAccount(deps: Deps, orgId: string, actor: string, input: TelephonyAccountInput) {
  assertPublicCallbacks(deps.config);
  const existing = await telephonyDb.liveTelephonyConnection(deps.sql, orgId);
  if (existing) throw oneAccountOnly(existing);
  const verified = await verify(deps, input);
  const id = newId();
  const credential = await createCredential(deps, orgId, actor, {
    name: connectionCredentialName(input.provider, id),
    description: `API keys of the ${PROVIDER_NAMES[input.provider]} account ${verified.label}`.slice(0, 1000),
    value: sealedValue(input, null),
  });
  try {
    await db.insertConnection(
      deps.sql,
      orgId,
      id,
      {
        integration: input.provider,
        kind: 'api_key',
        externalAccountId: verified.external_id,
        externalAccountLabel: verified.label,
        grantedScopes: [],
        endUserId: null,
        connectedBy: actor,
        credentialId: credential.id,
      },
      'The organization already has a telephony account',
    );
  } catch (error) {
    // No credential without its connection.
    await deleteCredential(deps, orgId, credential.id).catch(() => {});
    throw error;
  }
  return view(deps, (await db.getConnection(deps.sql, orgId, id))!);
}

const oneAccountOnly = (existing: ConnectionRow) =>
  conflict(
    `The organization already has a telephony account (${existing.integration}, connection ${existing.id}): ` +
      'put new keys on it, or delete it before connecting another',
  );

/**
 * New keys for the same account (a rotated token, or a reconnect after the provider refused the old
 * ones): checked at the provider first; the connection is active again. Another account is a 409:
 * calls in flight are verified with the account that placed them.
 */
export async function putTelephonyKeys(deps: Deps, orgId: string, actor: string, id: string, input: TelephonyAccountInput) {
  const row = await db.getConnection(deps.sql, orgId, id);
  if (row?.kind !== 'api_key') throw notFound('Connection not found');
  if (row.status === 'revoked' || !row.credential_id) throw conflict('The connection is revoked: connect the account again');
  if (row.integration !== input.provider)
    throw conflict(`The connection is a ${PROVIDER_NAMES[row.integration as TelephonyProvider]} account`);
  assertPublicCallbacks(deps.config);
  const verified = await verify(deps, input);
  if (verified.external_id !== row.external_account_id)
    throw conflict(`These keys open another account than ${row.external_account_label}: delete this connection and connect the other`);
  const before = await readCredentialValue(deps, orgId, row.credential_id);
  await setCredentialValue(deps, orgId, row.credential_id, sealedValue(input, before), null, { source: 'input', actor, merge: false });
  await db.reactivateConnection(deps.sql, orgId, id, {
    externalAccountLabel: verified.label,
    grantedScopes: [],
    connectedBy: actor,
    credentialId: row.credential_id,
    endUserId: null,
  });
  forgetTelephony(orgId);
  return view(deps, (await db.getConnection(deps.sql, orgId, id))!);
}

/** The settings a connected account's sealed keys make; null when its credential is gone. */
async function settingsOf(deps: Pick<ServiceDeps, 'sql' | 'config'>, row: ConnectionRow): Promise<TelephonyAccountSettings | null> {
  const value = row.credential_id ? await readCredentialValue(deps, row.org_id, row.credential_id) : null;
  if (!value) return null;
  const text = (key: string) => (typeof value[key] === 'string' ? (value[key] as string) : '');
  if (row.integration === 'twilio')
    return {
      provider: 'twilio',
      connectionId: row.id,
      accountSid: text('account_sid'),
      authToken: text('auth_token'),
      fromNumber: text('from_number') || null,
    };
  return {
    provider: 'vapi',
    connectionId: row.id,
    apiKey: text('api_key'),
    phoneNumberId: text('phone_number_id'),
    webhookSecret: text('webhook_secret'),
  };
}

/** How the organization's calls go out: its own account, else the deployment's, else simulated (where allowed). */
export async function telephonyOf(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string): Promise<OrgTelephony> {
  const row = await telephonyDb.liveTelephonyConnection(deps.sql, orgId);
  if (row) {
    const name = PROVIDER_NAMES[row.integration as TelephonyProvider];
    if (row.status === 'needs_reconnect')
      return { kind: 'none', reason: `telephony_account_needs_reconnect: ${name} refused the account's keys; put new ones` };
    const account = await settingsOf(deps, row);
    return account ? { kind: 'account', account } : { kind: 'none', reason: `telephony_account_unreadable: the ${name} keys are gone` };
  }
  const configured = configuredAccount(deps.config);
  if (configured) return { kind: 'account', account: configured };
  if (deps.config.DIALER_SIMULATED_ALLOWED) return { kind: 'simulated' };
  return { kind: 'none', reason: 'no_telephony_account: connect a Twilio or Vapi account (POST /integrations/telephony-accounts)' };
}

/**
 * Whether the organization's calls would go through the simulated dialer now (no account of its own, none
 * configured, simulated allowed): what a campaign's answer says in `simulated`. Reads no credential.
 */
export async function dialsSimulated(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string): Promise<boolean> {
  if (!deps.config.DIALER_SIMULATED_ALLOWED || configuredAccount(deps.config)) return false;
  return !(await telephonyDb.liveTelephonyConnection(deps.sql, orgId));
}

/**
 * A provider account sends every call's status to PUBLIC_BASE_URL: without a public https address there it
 * would post to localhost, so connecting one is refused (409) until the deployment has one.
 */
function assertPublicCallbacks(config: ServiceDeps['config']): void {
  if (!config.PUBLIC_BASE_URL?.startsWith('https://'))
    throw conflict(
      'Telephony accounts need the service at a public https address: PUBLIC_BASE_URL is ' +
        `${config.PUBLIC_BASE_URL ? `${config.PUBLIC_BASE_URL}, not https` : 'unset'}, so the provider's callbacks would not reach it`,
    );
}

const recent = new Map<string, { value: OrgTelephony; until: number }>();
/** How long a worker reuses an organization's resolved account before reading it again. */
const TELEPHONY_CACHE_MS = 10_000;

/** telephonyOf, remembered for a few seconds (the dispatcher asks every cycle). */
export async function cachedTelephonyOf(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string): Promise<OrgTelephony> {
  const hit = recent.get(orgId);
  if (hit && hit.until > Date.now()) return hit.value;
  const value = await telephonyOf(deps, orgId);
  recent.set(orgId, { value, until: Date.now() + TELEPHONY_CACHE_MS });
  return value;
}

/** Drops the remembered account (its keys changed, or the provider refused them). */
export const forgetTelephony = (orgId: string): void => void recent.delete(orgId);

/**
 * The provider refused a connected account's keys (401/403): the connection moves to needs_reconnect
 * once, and whoever connected it hears of it (`integration.needs_reconnect`).
 */
export async function markTelephonyRefused(deps: Pick<ServiceDeps, 'sql'>, orgId: string, connectionId: string, error: string) {
  forgetTelephony(orgId);
  await deps.sql.begin(async (tx) => {
    const moved = await telephonyDb.markTelephonyNeedsReconnect(
      tx,
      orgId,
      connectionId,
      'The provider refused the account keys: put new ones (PUT /integrations/telephony-accounts/{connection_id})',
    );
    if (moved) await announceNeedsReconnect(tx, orgId, moved, error);
  });
}

/**
 * The account a provider's callback belongs to: the connection its URL names (`account`), or without one
 * the deployment's account of that provider (503 when it has none). An unknown or revoked connection is 401.
 */
export async function callbackAccount(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  provider: TelephonyProvider,
  connectionId: string | undefined,
): Promise<{ orgId: string | null; account: TelephonyAccountSettings }> {
  if (!connectionId) {
    const configured = configuredAccount(deps.config);
    if (configured?.provider !== provider) throw unavailable(`${PROVIDER_NAMES[provider]} callbacks are not configured in this deployment`);
    return { orgId: null, account: configured };
  }
  const row = UUID.test(connectionId) ? await telephonyDb.telephonyConnectionById(deps.sql, connectionId) : undefined;
  const account = row && row.integration === provider && row.status !== 'revoked' ? await settingsOf(deps, row) : null;
  if (!row || !account) throw unauthenticated(`Unknown ${PROVIDER_NAMES[provider]} account`);
  return { orgId: row.org_id, account };
}
