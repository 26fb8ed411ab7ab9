import { publicBaseUrl, type Config } from '../../core/config';
import { withAccount, type TelephonyAccountSettings } from './accounts';
import { exchange, ProviderError, twilioAuthorization, type ProviderResponse } from './http';
import {
  twilioInboundRouting,
  twilioInboundStatusUrl,
  vapiInboundRouting,
  type InboundRouting,
  type SipAuth,
  type SipAuthResources,
} from './inbound-routing';

// The telephony account's inventory, beside the calls: the phone numbers it owns, and the SIP
// endpoint an agent is reached at. Twilio: IncomingPhoneNumbers (paged by next_page_uri) and one SIP
// domain per agent (`agent-<agent_id>.sip.twilio.com`) whose VoiceUrl is our TwiML endpoint, which
// bridges each call to the agent's SIP address as campaign calls are. Vapi: `GET /phone-number`; Vapi
// has no SIP domains, so a SIP deploy there only records the address. Every request is bounded by
// DIALER_PROVIDER_TIMEOUT_MS; any failure is a ProviderError.

/** Where Twilio asks, for a call to an agent's SIP domain, what to do (the agent id in the path). */
export const TWILIO_SIP_VOICE_PATH = '/telephony/twilio/agents/{agent_id}/voice';

export const twilioSipVoiceUrl = (callbackBaseUrl: string, agentId: string, connectionId: string | null = null): string =>
  withAccount(
    `${callbackBaseUrl.replace(/\/+$/, '')}${TWILIO_SIP_VOICE_PATH.replace('{agent_id}', encodeURIComponent(agentId))}`,
    connectionId,
  );

/** The SIP domain of an agent at Twilio (unique per agent; Twilio's domain names are global). */
export const twilioSipDomainName = (agentId: string): string => `agent-${agentId.toLowerCase()}.sip.twilio.com`;

export interface ProviderNumber {
  provider_id: string;
  /** E.164 */
  number: string;
  label: string | null;
}

export interface ProviderSipEndpoint {
  provider_id: string;
  sip_uri: string;
}

export interface TelephonyAccount {
  readonly provider: 'twilio' | 'vapi';
  /** Every phone number of the account (numbers without an E.164 address, such as SIP-only ones, are left out). */
  listNumbers(): Promise<ProviderNumber[]>;
  /**
   * Creates the agent's SIP endpoint (Twilio: a SIP domain; Vapi: a SIP number answering `credentials`);
   * null when the provider has none to create (the address is only recorded).
   */
  createSipEndpoint(agentId: string, credentials?: { username: string; password: string } | null): Promise<ProviderSipEndpoint | null>;
  /** Removes it; one the provider no longer has counts as removed. */
  deleteSipEndpoint(providerId: string): Promise<void>;
  /** Lets the callers `auth` names call the endpoint (Twilio: a credential or IP access list mapped to the domain). */
  createSipAuth(providerId: string, agentId: string, auth: SipAuth): Promise<SipAuthResources>;
  /** Removes what createSipAuth made. */
  deleteSipAuth(providerId: string, made: SipAuthResources): Promise<void>;
  /** Points numbers at the service, and back. */
  readonly routing: InboundRouting;
}

/** Vapi's SIP host for its API's region (sip.eu.vapi.ai beside api.eu.vapi.ai). */
export const vapiSipHost = (apiBaseUrl: string): string => (/\.eu\.vapi\.ai/.test(apiBaseUrl) ? 'sip.eu.vapi.ai' : 'sip.vapi.ai');

const E164 = /^\+[1-9][0-9]{6,14}$/;
/** How many pages of numbers are read at most (Twilio: 1000 a page). */
const MAX_PAGES = 50;

function fail(response: ProviderResponse, what: string): never {
  const detail = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
  throw new ProviderError(`${what} answered ${response.status}: ${detail.slice(0, 300)}`, response.status);
}

const ok = (r: ProviderResponse) => r.status >= 200 && r.status < 300;

/** The inventory of a provider account (the organization's own or the deployment's); null for none. */
export function telephonyAccount(config: Config, account: TelephonyAccountSettings | null): TelephonyAccount | null {
  if (!account) return null;
  if (account.provider === 'twilio')
    return twilioAccount({
      baseUrl: config.TWILIO_API_BASE_URL,
      accountSid: account.accountSid,
      authToken: account.authToken,
      callbackBaseUrl: publicBaseUrl(config),
      connectionId: account.connectionId,
      timeoutMs: config.DIALER_PROVIDER_TIMEOUT_MS,
    });
  return vapiAccount({
    baseUrl: config.VAPI_API_BASE_URL,
    apiKey: account.apiKey,
    timeoutMs: config.DIALER_PROVIDER_TIMEOUT_MS,
    callbackBaseUrl: publicBaseUrl(config),
    connectionId: account.connectionId,
    webhookSecret: account.webhookSecret,
  });
}

interface TwilioIncomingNumber {
  sid: string;
  phone_number: string;
  friendly_name?: string | null;
}

interface TwilioSipDomain {
  sid: string;
  domain_name: string;
}

export function twilioAccount(options: {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  callbackBaseUrl: string;
  connectionId: string | null;
  timeoutMs: number;
}): TelephonyAccount {
  const root = options.baseUrl.replace(/\/+$/, '');
  const accountPath = `${root}/2010-04-01/Accounts/${options.accountSid}`;
  const headers = {
    Authorization: twilioAuthorization(options.accountSid, options.authToken),
    Accept: 'application/json',
  };
  const get = (url: string, what: string) => exchange(url, { method: 'GET', headers }, options.timeoutMs, what);
  const inbound = twilioInboundRouting({ accountPath, headers, ...options });

  /** The domain already made for this name (a create whose answer was lost), if any. */
  async function findDomain(domainName: string): Promise<TwilioSipDomain | null> {
    let url: string | null = `${accountPath}/SIP/Domains.json?PageSize=1000`;
    for (let page = 0; url && page < MAX_PAGES; page++) {
      const response = await get(url, 'Twilio list SIP domains');
      if (!ok(response)) fail(response, 'Twilio list SIP domains');
      const body = response.body as { domains?: TwilioSipDomain[]; next_page_uri?: string | null };
      const found = (body.domains ?? []).find((d) => d.domain_name === domainName);
      if (found) return found;
      url = body.next_page_uri ? `${root}${body.next_page_uri}` : null;
    }
    return null;
  }

  return {
    provider: 'twilio',
    routing: inbound,
    createSipAuth: (domainSid, agentId, auth) => inbound.createSipAuth(domainSid, agentId, auth),
    deleteSipAuth: (domainSid, made) => inbound.deleteSipAuth(domainSid, made),

    async listNumbers() {
      const numbers: ProviderNumber[] = [];
      let url: string | null = `${accountPath}/IncomingPhoneNumbers.json?PageSize=1000`;
      for (let page = 0; url; page++) {
        if (page === MAX_PAGES) throw new ProviderError(`Twilio list numbers: more than ${MAX_PAGES} pages`, null);
        const response = await get(url, 'Twilio list numbers');
        if (!ok(response)) fail(response, 'Twilio list numbers');
        const body = response.body as { incoming_phone_numbers?: TwilioIncomingNumber[]; next_page_uri?: string | null };
        if (!Array.isArray(body.incoming_phone_numbers)) throw new ProviderError('Twilio list numbers: no incoming_phone_numbers', 200);
        for (const n of body.incoming_phone_numbers)
          if (E164.test(n.phone_number ?? '')) numbers.push({ provider_id: n.sid, number: n.phone_number, label: n.friendly_name || null });
        url = body.next_page_uri ? `${root}${body.next_page_uri}` : null;
      }
      return numbers;
    },

    async createSipEndpoint(agentId) {
      const domainName = twilioSipDomainName(agentId);
      const form = new URLSearchParams({
        DomainName: domainName,
        FriendlyName: `Agent ${agentId}`,
        VoiceUrl: twilioSipVoiceUrl(options.callbackBaseUrl, agentId, options.connectionId),
        VoiceMethod: 'POST',
        // How its calls end: one the caller left before the engine took it ends its conversation.
        VoiceStatusCallbackUrl: twilioInboundStatusUrl(options.callbackBaseUrl, options.connectionId),
        VoiceStatusCallbackMethod: 'POST',
      });
      const response = await exchange(
        `${accountPath}/SIP/Domains.json`,
        { method: 'POST', headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }, body: form.toString() },
        options.timeoutMs,
        'Twilio create SIP domain',
      );
      let domain = ok(response) ? (response.body as TwilioSipDomain) : null;
      // Refused, perhaps because an earlier request made it and its answer was lost: adopt it if it is ours.
      if (!domain && response.status >= 400 && response.status < 500 && ![401, 403, 429].includes(response.status))
        domain = await findDomain(domainName);
      if (!domain) fail(response, 'Twilio create SIP domain');
      if (!domain.sid) throw new ProviderError('Twilio create SIP domain answered without a sid', response.status);
      return { provider_id: domain.sid, sip_uri: `sip:${agentId}@${domain.domain_name ?? domainName}` };
    },

    async deleteSipEndpoint(providerId) {
      const response = await exchange(
        `${accountPath}/SIP/Domains/${encodeURIComponent(providerId)}.json`,
        { method: 'DELETE', headers },
        options.timeoutMs,
        'Twilio delete SIP domain',
      );
      if (ok(response) || response.status === 404) return;
      fail(response, 'Twilio delete SIP domain');
    },
  };
}

interface VapiPhoneNumber {
  id: string;
  number?: string | null;
  name?: string | null;
}

export function vapiAccount(options: {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  callbackBaseUrl: string;
  connectionId: string | null;
  webhookSecret: string;
}): TelephonyAccount {
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers = { Authorization: `Bearer ${options.apiKey}`, Accept: 'application/json' };
  const inbound = vapiInboundRouting({ base, headers, ...options });
  return {
    provider: 'vapi',
    routing: inbound,

    async listNumbers() {
      const response = await exchange(
        `${base}/phone-number?limit=1000`,
        { method: 'GET', headers },
        options.timeoutMs,
        'Vapi list numbers',
      );
      if (!ok(response)) fail(response, 'Vapi list numbers');
      if (!Array.isArray(response.body)) throw new ProviderError('Vapi list numbers: the answer is not a list', response.status);
      return (response.body as VapiPhoneNumber[])
        .filter((n) => E164.test(n.number ?? ''))
        .map((n) => ({ provider_id: n.id, number: n.number!, label: n.name || null }));
    },

    // Vapi's SIP inbound is a SIP number (sip:<user>@sip.vapi.ai) with digest authentication, whose calls
    // ask the service for their assistant; without credentials nothing is made (the address is recorded).
    createSipEndpoint: async (agentId, credentials) =>
      credentials ? inbound.createSipNumber(`sip:agent-${agentId.toLowerCase()}@${vapiSipHost(base)}`, agentId, credentials) : null,
    deleteSipEndpoint: (id) => inbound.deleteSipNumber(id),
    // The SIP number carries its own authentication.
    createSipAuth: async () => ({}),
    deleteSipAuth: async () => {},
  };
}
