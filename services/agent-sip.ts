import * as agents from '../db/agents';
import * as sipEndpoints from '../db/agent-sip';
import type { SipEndpointRow } from '../db/agent-sip';
import { SIP_PROVISIONING_NOTE, SIP_VAPI_NOTE, sipTwilioNote, sipUri, sipVapiNote } from '../domain/agents';
import { conflict, notFound, unavailable, upstream } from '../domain/errors';
import { publicBaseUrl } from '../platform/core/config';
import { ProviderError } from '../platform/adapters/dialers/http';
import type { SipAuth } from '../platform/adapters/dialers/inbound-routing';
import { telephonyAccount, twilioSipDomainName, twilioSipVoiceUrl, type TelephonyAccount } from '../platform/adapters/dialers/provisioning';
import type { TelephonyAccountSettings } from '../platform/adapters/dialers/accounts';
import { verifyTwilioRequest } from './campaigns/telephony-callbacks';
import { answerInboundCall } from './conversations/inbound';
import { sipCredentials, type SipCredentials } from './sip-credentials';
import { telephonyOf } from './integrations/telephony-accounts';
import type { ServiceDeps } from './deps';
import { iso } from './views';

// An agent's SIP endpoint (docs/decisions/telephony.md). With the simulated dialer the address
// sip:<agent_id>@<SIP_HOST> is recorded; with Twilio a SIP domain is made for the agent, callers let in by a
// credential list (a username and password made here, shown once) or the IP addresses the request names,
// and its calls Twilio hands to POST /telephony/twilio/agents/{agent_id}/voice are streamed to the voice
// engine; with Vapi a SIP number with that username and password, whose calls ask the service for the
// agent's assistant.

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

const agentNotFound = () => notFound('Agent not found');

/** What an agent's read shows of its SIP endpoint. */
export const sipView = (sip: SipEndpointRow | undefined) => ({
  deployed: sip ? sip.state !== 'provisioning' : false,
  sip_uri: sip?.sip_uri ?? null,
  deployed_at: sip && sip.state !== 'provisioning' ? sip.created_at.toISOString() : null,
  state: sip?.state ?? null,
  provider: (sip?.provider ?? null) as 'simulated' | 'twilio' | 'vapi' | null,
  provider_id: sip?.provider_id ?? null,
});

function deploymentView(
  deps: Pick<ServiceDeps, 'config'>,
  sip: SipEndpointRow,
  version: number,
  connectionId: string | null,
  credentials: SipCredentials | null = null,
) {
  const provisioned = sip.state === 'active';
  const addresses = sip.auth_kind === 'ip_addresses' ? (sip.auth_resources.addresses ?? '').split(',').filter(Boolean) : null;
  const who = addresses ? `calls from ${addresses.join(', ')}` : 'callers with the username and password';
  const note = !provisioned
    ? sip.provider === 'vapi'
      ? SIP_VAPI_NOTE
      : SIP_PROVISIONING_NOTE
    : sip.provider === 'vapi'
      ? sipVapiNote(sip.provider_id ?? '')
      : sipTwilioNote(sip.provider_id ?? '', twilioSipVoiceUrl(publicBaseUrl(deps.config), sip.agent_id, connectionId), who);
  return {
    agent_id: sip.agent_id,
    sip_uri: sip.sip_uri,
    version,
    deployed_at: iso(sip.created_at)!,
    provisioning: provisioned ? ('provisioned' as const) : ('recorded' as const),
    provider: sip.provider as 'simulated' | 'twilio' | 'vapi',
    state: sip.state as 'recorded' | 'active',
    provider_id: sip.provider_id,
    auth: provisioned && sip.auth_kind ? { kind: sip.auth_kind, username: sip.auth_username, ip_addresses: addresses } : null,
    credentials,
    note,
  };
}

const providerFailure = (error: ProviderError) => upstream(`The telephony provider failed: ${error.message}`);

export interface SipDeployInput {
  /** IPv4 addresses or CIDR ranges let in instead of a username and password. */
  ip_addresses?: string[];
}

const toSipAuth = (input: SipDeployInput, credentials: SipCredentials | null): SipAuth =>
  input.ip_addresses?.length
    ? {
        kind: 'ip_addresses',
        addresses: input.ip_addresses.map((a) => {
          const [ip, prefix] = a.split('/');
          return { ip: ip!, prefix: prefix === undefined ? 32 : Number(prefix) };
        }),
      }
    : { kind: 'credentials', ...credentials! };

/**
 * Deploys the agent's published version over SIP (idempotent: an endpoint already made is answered as it
 * is, without its password); 409 without a published version, or for IP addresses at Vapi; 502 when the
 * provider fails, and then nothing is left recorded or made.
 */
export async function deploySip(deps: Deps, orgId: string, actor: string, agentId: string, input: SipDeployInput = {}) {
  const { sql, config } = deps;
  const agent = await agents.getAgent(sql, orgId, agentId);
  if (!agent) throw agentNotFound();
  if (agent.published_version === null) throw conflict('Publish a version before deploying the agent over SIP');
  const version = agent.published_version;
  const settings = await accountFor(deps, orgId);
  const provider = settings?.provider ?? 'simulated';
  const connectionId = settings?.connectionId ?? null;
  const existing = await sipEndpoints.getSipEndpoint(sql, orgId, agent.id);
  // A provider's endpoint stands whatever the account is now; a recorded address stands for its own dialer.
  // (A Twilio domain made before callers were let in, deployed again through the same provider, gets its list.)
  if (existing?.state === 'active' && (existing.auth_kind || existing.provider !== 'twilio' || provider !== 'twilio'))
    return deploymentView(deps, existing, version, connectionId);
  if (existing?.state === 'recorded' && existing.provider === provider && provider === 'simulated')
    return deploymentView(deps, existing, version, connectionId);

  const account = telephonyAccount(config, settings);
  if (!account) {
    const row = await sipEndpoints.writeSipEndpoint(
      sql,
      orgId,
      agent.id,
      { sip_uri: sipUri(agent.id, config.SIP_HOST), provider, state: 'recorded' },
      actor,
    );
    return deploymentView(deps, row, version, connectionId);
  }
  if (account.provider === 'vapi' && input.ip_addresses?.length)
    throw conflict("Vapi's SIP numbers let callers in by username and password only: deploy without ip_addresses");
  const credentials = input.ip_addresses?.length ? null : sipCredentials();

  let row = existing?.state === 'active' ? existing : await provision(deps, account, settings, orgId, actor, agent.id, credentials);
  if (account.provider === 'twilio') row = await letIn(deps, account, settings, row, toSipAuth(input, credentials));
  else
    row = (await sipEndpoints.setSipAuth(sql, orgId, agent.id, { kind: 'credentials', username: credentials!.username, resources: {} }))!;
  return deploymentView(deps, row, version, connectionId, credentials);
}

/** Makes the endpoint at the provider: written provisioning first (never shown deployed), active with its id after. */
async function provision(
  deps: Deps,
  account: TelephonyAccount,
  settings: TelephonyAccountSettings | null,
  orgId: string,
  actor: string,
  agentId: string,
  credentials: SipCredentials | null,
): Promise<SipEndpointRow> {
  const { sql } = deps;
  const pending = account.provider === 'twilio' ? sipUri(agentId, twilioSipDomainName(agentId)) : `sip:agent-${agentId}@vapi.pending`;
  await sipEndpoints.writeSipEndpoint(sql, orgId, agentId, { sip_uri: pending, provider: account.provider, state: 'provisioning' }, actor);
  let made: { provider_id: string; sip_uri: string } | null;
  try {
    made = await account.createSipEndpoint(agentId, credentials);
  } catch (error) {
    await sipEndpoints.deleteSipEndpoint(sql, orgId, agentId, true);
    if (error instanceof ProviderError) throw providerFailure(error);
    throw error;
  }
  if (!made) throw new Error(`${account.provider} made no SIP endpoint`);
  let row: SipEndpointRow | undefined;
  try {
    row = await sipEndpoints.activateSipEndpoint(sql, orgId, agentId, made);
  } catch (error) {
    await undo(deps, settings, made.provider_id);
    throw error;
  }
  if (!row) {
    // Removed (DELETE, or the agent deleted) while the provider made it: take it back.
    await undo(deps, settings, made.provider_id);
    throw conflict('The SIP endpoint was removed while it was being deployed');
  }
  return row;
}

/** Lets callers in to a Twilio domain; a failure removes the domain (and the row) so nothing half made stays. */
async function letIn(
  deps: Deps,
  account: TelephonyAccount,
  settings: TelephonyAccountSettings | null,
  row: SipEndpointRow,
  auth: SipAuth,
): Promise<SipEndpointRow> {
  let resources: Record<string, string>;
  try {
    resources = await account.createSipAuth(row.provider_id!, row.agent_id, auth);
  } catch (error) {
    await undo(deps, settings, row.provider_id!);
    await sipEndpoints.deleteSipEndpoint(deps.sql, row.org_id, row.agent_id);
    if (error instanceof ProviderError) throw providerFailure(error);
    throw error;
  }
  if (auth.kind === 'ip_addresses') resources.addresses = auth.addresses.map((a) => `${a.ip}/${a.prefix}`).join(',');
  const updated = await sipEndpoints.setSipAuth(deps.sql, row.org_id, row.agent_id, {
    kind: auth.kind,
    username: auth.kind === 'credentials' ? auth.username : null,
    resources,
  });
  if (!updated) {
    await account.deleteSipAuth(row.provider_id!, resources).catch(() => {});
    throw conflict('The SIP endpoint was removed while it was being deployed');
  }
  return updated;
}

/** Removes a domain made for an endpoint that is not recorded; a failure is logged (it is left at Twilio). */
async function undo(deps: Deps, settings: TelephonyAccountSettings | null, providerId: string): Promise<void> {
  try {
    await telephonyAccount(deps.config, settings)?.deleteSipEndpoint(providerId);
  } catch (error) {
    deps.logger.warn({ err: error, provider_id: providerId }, 'SIP domain left at the provider');
  }
}

/** Removes the SIP endpoint, at the provider first (one it no longer has counts as removed); 204 also when none was deployed. */
export async function removeSip(deps: Deps, orgId: string, agentId: string): Promise<void> {
  const { sql, config } = deps;
  if (!(await agents.getAgent(sql, orgId, agentId))) throw agentNotFound();
  const sip = await sipEndpoints.getSipEndpoint(sql, orgId, agentId);
  if (!sip) return;
  if (sip.provider_id && sip.provider !== 'simulated') {
    const account = telephonyAccount(config, await accountFor(deps, orgId));
    if (account?.provider !== sip.provider)
      throw unavailable(`The SIP endpoint was made at ${sip.provider}, which is not the organization's telephony account now`);
    try {
      await account.deleteSipEndpoint(sip.provider_id);
      // The domain's mappings went with it; the lists made for it go now.
      await account.deleteSipAuth(sip.provider_id, sip.auth_resources ?? {});
    } catch (error) {
      if (error instanceof ProviderError) throw providerFailure(error);
      throw error;
    }
  }
  await sipEndpoints.deleteSipEndpoint(sql, orgId, agentId);
}

/**
 * Twilio's request for a call to an agent's SIP domain (signed as its status callbacks are): TwiML that
 * streams the call to the voice engine for the agent's published version (channel `sip`), its
 * conversation made now, ringing. 404 when the agent has no SIP domain at Twilio or nothing published.
 */
export async function answerTwilioSipCall(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  request: { url: string; agentId: string; params: Record<string, string>; signature: string; account?: string },
): Promise<string> {
  const orgId = await verifyTwilioRequest(deps, request);
  const sip = await sipEndpoints.activeSipEndpoint(deps.sql, 'twilio', request.agentId);
  if (!sip || (orgId && sip.org_id !== orgId)) throw notFound('The agent has no SIP domain at Twilio');
  const agent = await agents.getAgent(deps.sql, sip.org_id, sip.agent_id);
  if (agent?.published_version == null || !request.params.CallSid) throw notFound('The agent has no published version');
  return answerInboundCall(deps, {
    orgId: sip.org_id,
    agentId: sip.agent_id,
    version: agent.published_version,
    channel: 'sip',
    callSid: request.params.CallSid,
    from: request.params.From || null,
    to: request.params.To || null,
    // The account the call came through signs Twilio's question when the stream ends.
    account: request.account ?? null,
  });
}

/**
 * The provider account the organization's SIP endpoints are made at: its own or the deployment's;
 * null for the simulated dialer. 503 while its connected account needs new keys (or none is allowed).
 */
async function accountFor(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string): Promise<TelephonyAccountSettings | null> {
  const telephony = await telephonyOf(deps, orgId);
  if (telephony.kind === 'none') throw unavailable(`No usable telephony account: ${telephony.reason}`);
  return telephony.kind === 'account' ? telephony.account : null;
}
