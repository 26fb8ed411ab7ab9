import * as agents from '../db/agents';
import * as sipEndpoints from '../db/agent-sip';
import type { SipEndpointRow } from '../db/agent-sip';
import { SIP_PROVISIONING_NOTE, SIP_VAPI_NOTE, sipTwilioNote, sipUri } from '../domain/agents';
import { conflict, notFound, unavailable, upstream } from '../domain/errors';
import { publicBaseUrl } from '../platform/core/config';
import { ProviderError } from '../platform/adapters/dialers/http';
import { telephonyAccount, twilioSipDomainName, twilioSipVoiceUrl } from '../platform/adapters/dialers/provisioning';
import { agentTwiml } from '../platform/adapters/dialers/twilio';
import type { TelephonyAccountSettings } from '../platform/adapters/dialers/accounts';
import { verifyTwilioRequest } from './campaigns/telephony-callbacks';
import { telephonyOf } from './integrations/telephony-accounts';
import type { ServiceDeps } from './deps';
import { iso } from './views';

// An agent's SIP endpoint (docs/decisions/telephony.md). With the simulated dialer the address
// sip:<agent_id>@<SIP_HOST> is recorded; with Twilio a SIP domain is made for the agent, whose calls
// Twilio hands to POST /telephony/twilio/agents/{agent_id}/voice, answered with the TwiML campaign calls
// use (bridge to the agent's SIP address); Vapi has no SIP domains, so the address is recorded there too.

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

function deploymentView(deps: Pick<ServiceDeps, 'config'>, sip: SipEndpointRow, version: number, connectionId: string | null) {
  const provisioned = sip.state === 'active';
  const note = !provisioned
    ? sip.provider === 'vapi'
      ? SIP_VAPI_NOTE
      : SIP_PROVISIONING_NOTE
    : sipTwilioNote(
        sip.provider_id ?? '',
        twilioSipVoiceUrl(publicBaseUrl(deps.config), sip.agent_id, connectionId),
        sipUri(sip.agent_id, deps.config.SIP_HOST),
      );
  return {
    agent_id: sip.agent_id,
    sip_uri: sip.sip_uri,
    version,
    deployed_at: iso(sip.created_at)!,
    provisioning: provisioned ? ('provisioned' as const) : ('recorded' as const),
    provider: sip.provider as 'simulated' | 'twilio' | 'vapi',
    state: sip.state as 'recorded' | 'active',
    provider_id: sip.provider_id,
    note,
  };
}

const providerFailure = (error: ProviderError) => upstream(`The telephony provider failed: ${error.message}`);

/**
 * Deploys the agent's published version over SIP (idempotent); 409 without a published version, 502
 * when the provider fails, and then nothing is left recorded.
 */
export async function deploySip(deps: Deps, orgId: string, actor: string, agentId: string) {
  const { sql, config } = deps;
  const agent = await agents.getAgent(sql, orgId, agentId);
  if (!agent) throw agentNotFound();
  if (agent.published_version === null) throw conflict('Publish a version before deploying the agent over SIP');
  const version = agent.published_version;
  const settings = await accountFor(deps, orgId);
  const provider = settings?.provider ?? 'simulated';
  const existing = await sipEndpoints.getSipEndpoint(sql, orgId, agent.id);
  // A provider's endpoint stands whatever the account is now; a recorded address stands for its own dialer.
  if (existing && (existing.state === 'active' || (existing.state === 'recorded' && existing.provider === provider)))
    return deploymentView(deps, existing, version, settings?.connectionId ?? null);

  const account = telephonyAccount(config, settings);
  if (!account || account.provider === 'vapi') {
    const row = await sipEndpoints.writeSipEndpoint(
      sql,
      orgId,
      agent.id,
      { sip_uri: sipUri(agent.id, config.SIP_HOST), provider, state: 'recorded' },
      actor,
    );
    return deploymentView(deps, row, version, settings?.connectionId ?? null);
  }

  // Twilio: written as provisioning first (never shown deployed), made at Twilio, then active.
  await sipEndpoints.writeSipEndpoint(
    sql,
    orgId,
    agent.id,
    { sip_uri: sipUri(agent.id, twilioSipDomainName(agent.id)), provider, state: 'provisioning' },
    actor,
  );
  let made: { provider_id: string; sip_uri: string } | null;
  try {
    made = await account.createSipEndpoint(agent.id);
  } catch (error) {
    await sipEndpoints.deleteSipEndpoint(sql, orgId, agent.id, true);
    if (error instanceof ProviderError) throw providerFailure(error);
    throw error;
  }
  if (!made) throw new Error('Twilio made no SIP domain');
  let row: SipEndpointRow | undefined;
  try {
    row = await sipEndpoints.activateSipEndpoint(sql, orgId, agent.id, made);
  } catch (error) {
    await undo(deps, settings, made.provider_id);
    throw error;
  }
  if (!row) {
    // Removed (DELETE, or the agent deleted) while Twilio made it: take it back.
    await undo(deps, settings, made.provider_id);
    throw conflict('The SIP endpoint was removed while it was being deployed');
  }
  return deploymentView(deps, row, version, settings?.connectionId ?? null);
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
    } catch (error) {
      if (error instanceof ProviderError) throw providerFailure(error);
      throw error;
    }
  }
  await sipEndpoints.deleteSipEndpoint(sql, orgId, agentId);
}

/**
 * Twilio's request for a call to an agent's SIP domain (signed as its status callbacks are): TwiML that
 * bridges the caller to the agent's SIP address, as an answered campaign call is, with the call sid as
 * the call key. 404 when the agent has no SIP domain at Twilio.
 */
export async function answerTwilioSipCall(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  request: { url: string; agentId: string; params: Record<string, string>; signature: string; account?: string },
): Promise<string> {
  const orgId = await verifyTwilioRequest(deps, request);
  const sip = await sipEndpoints.activeSipEndpoint(deps.sql, 'twilio', request.agentId);
  if (!sip || (orgId && sip.org_id !== orgId)) throw notFound('The agent has no SIP domain at Twilio');
  return agentTwiml(sip.agent_id, deps.config.SIP_HOST, request.params.CallSid ?? '');
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
