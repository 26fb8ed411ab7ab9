import { withAccount } from './accounts';
import { exchange, ProviderError, type ProviderResponse } from './http';

// Inbound calls to the service, at the provider: a number pointed at the service (and put back as it
// was), and who may call an agent's SIP endpoint. Twilio: the number's VoiceUrl, VoiceMethod and
// StatusCallback (its VoiceApplicationSid cleared, since an application overrides the URL); a SIP domain's
// credential list or IP access control list, mapped to the domain's call authentication. Vapi: the
// number's assistant, squad and workflow cleared and its server set, so each call asks the service for
// its assistant (`assistant-request`); a Vapi SIP number (`provider: vapi`, `sipUri`, `authentication`)
// for SIP. Every request is bounded by the caller's timeout; any failure is a ProviderError.

/** Where Twilio asks what to do with a call to a number an agent answers. */
export const TWILIO_INBOUND_VOICE_PATH = '/telephony/twilio/voice';
/** Where Twilio reports how those calls went (one that ended before the engine took it). */
export const TWILIO_INBOUND_STATUS_PATH = '/telephony/twilio/inbound-status';
/** Where Vapi asks for the assistant of a call to a number (or SIP address) an agent answers. */
export const VAPI_INBOUND_PATH = '/telephony/vapi/inbound';

const join = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;

export const twilioInboundVoiceUrl = (callbackBaseUrl: string, connectionId: string | null) =>
  withAccount(join(callbackBaseUrl, TWILIO_INBOUND_VOICE_PATH), connectionId);
export const twilioInboundStatusUrl = (callbackBaseUrl: string, connectionId: string | null) =>
  withAccount(join(callbackBaseUrl, TWILIO_INBOUND_STATUS_PATH), connectionId);
export const vapiInboundUrl = (callbackBaseUrl: string, connectionId: string | null) =>
  withAccount(join(callbackBaseUrl, VAPI_INBOUND_PATH), connectionId);

/** What a number pointed at before the service (the provider's own field names), to be put back. */
export type NumberRouting = Record<string, unknown>;

/** Who may call an agent's SIP endpoint: a username and password, or IPv4 addresses and ranges. */
export type SipAuth =
  | { kind: 'credentials'; username: string; password: string }
  | { kind: 'ip_addresses'; addresses: { ip: string; prefix: number }[] };

/** The provider's resources made for a SIP endpoint's callers, to be removed with it (their sids by role). */
export type SipAuthResources = Record<string, string>;

export interface InboundRouting {
  /**
   * Points the number at the service. `keep` is called with what it pointed at before (null when it
   * already points at the service: what was kept stays) before it is changed.
   */
  routeNumber(providerNumberId: string, keep: (previous: NumberRouting | null) => Promise<void>): Promise<void>;
  /** Puts back what the number pointed at (nothing known: cleared); a number the provider no longer has counts as done. */
  restoreNumber(providerNumberId: string, previous: NumberRouting | null): Promise<void>;
}

const ok = (r: ProviderResponse) => r.status >= 200 && r.status < 300;

function fail(response: ProviderResponse, what: string): never {
  const detail = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
  throw new ProviderError(`${what} answered ${response.status}: ${detail.slice(0, 300)}`, response.status);
}

interface TwilioOptions {
  accountPath: string;
  headers: Record<string, string>;
  callbackBaseUrl: string;
  connectionId: string | null;
  timeoutMs: number;
}

/** The fields of a Twilio number the service sets, by their names in the resource and in an update. */
const TWILIO_NUMBER_FIELDS = [
  ['voice_url', 'VoiceUrl'],
  ['voice_method', 'VoiceMethod'],
  ['status_callback', 'StatusCallback'],
  ['status_callback_method', 'StatusCallbackMethod'],
  ['voice_application_sid', 'VoiceApplicationSid'],
] as const;

export function twilioInboundRouting(o: TwilioOptions) {
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { ...o.headers, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  const post = async (path: string, fields: Record<string, string>, what: string) => {
    const response = await exchange(`${o.accountPath}${path}`, form(fields), o.timeoutMs, what);
    if (!ok(response)) fail(response, what);
    const sid = (response.body as { sid?: string }).sid;
    if (!sid) throw new ProviderError(`${what} answered without a sid`, response.status);
    return sid;
  };
  const remove = async (path: string, what: string) => {
    const response = await exchange(`${o.accountPath}${path}`, { method: 'DELETE', headers: o.headers }, o.timeoutMs, what);
    if (!ok(response) && response.status !== 404) fail(response, what);
  };
  const numberPath = (sid: string) => `/IncomingPhoneNumbers/${encodeURIComponent(sid)}.json`;
  const voiceUrl = twilioInboundVoiceUrl(o.callbackBaseUrl, o.connectionId);

  const routing: InboundRouting = {
    async routeNumber(sid, keep) {
      const read = await exchange(
        `${o.accountPath}${numberPath(sid)}`,
        { method: 'GET', headers: o.headers },
        o.timeoutMs,
        'Twilio fetch number',
      );
      if (!ok(read)) fail(read, 'Twilio fetch number');
      const current = read.body as Record<string, unknown>;
      const ours = typeof current.voice_url === 'string' && current.voice_url.split('?')[0] === voiceUrl.split('?')[0];
      await keep(ours ? null : Object.fromEntries(TWILIO_NUMBER_FIELDS.map(([field]) => [field, current[field] ?? null])));
      await post(
        numberPath(sid),
        {
          VoiceUrl: voiceUrl,
          VoiceMethod: 'POST',
          StatusCallback: twilioInboundStatusUrl(o.callbackBaseUrl, o.connectionId),
          StatusCallbackMethod: 'POST',
          VoiceApplicationSid: '',
        },
        'Twilio update number',
      );
    },
    async restoreNumber(sid, previous) {
      const fields = Object.fromEntries(
        TWILIO_NUMBER_FIELDS.map(([field, param]) => [param, typeof previous?.[field] === 'string' ? (previous[field] as string) : '']),
      );
      // An empty method is refused; Twilio's default is POST.
      if (!fields.VoiceMethod) fields.VoiceMethod = 'POST';
      if (!fields.StatusCallbackMethod) fields.StatusCallbackMethod = 'POST';
      const response = await exchange(`${o.accountPath}${numberPath(sid)}`, form(fields), o.timeoutMs, 'Twilio update number');
      if (!ok(response) && response.status !== 404) fail(response, 'Twilio update number');
    },
  };

  return {
    ...routing,
    /** Lets the callers `auth` names call the SIP domain; what was made is returned (and removed again if a step fails). */
    async createSipAuth(domainSid: string, agentId: string, auth: SipAuth): Promise<SipAuthResources> {
      const name = `Agent ${agentId}`.slice(0, 64);
      const made: SipAuthResources = {};
      try {
        if (auth.kind === 'credentials') {
          made.credential_list_sid = await post('/SIP/CredentialLists.json', { FriendlyName: name }, 'Twilio create credential list');
          made.credential_sid = await post(
            `/SIP/CredentialLists/${made.credential_list_sid}/Credentials.json`,
            { Username: auth.username, Password: auth.password },
            'Twilio create credential',
          );
          made.credential_list_mapping_sid = await post(
            `/SIP/Domains/${domainSid}/Auth/Calls/CredentialListMappings.json`,
            { CredentialListSid: made.credential_list_sid },
            'Twilio map credential list',
          );
        } else {
          made.ip_access_control_list_sid = await post(
            '/SIP/IpAccessControlLists.json',
            { FriendlyName: name },
            'Twilio create IP access list',
          );
          for (const [i, a] of auth.addresses.entries())
            await post(
              `/SIP/IpAccessControlLists/${made.ip_access_control_list_sid}/IpAddresses.json`,
              { FriendlyName: `${name} ${i + 1}`, IpAddress: a.ip, CidrPrefixLength: String(a.prefix) },
              'Twilio add IP address',
            );
          made.ip_access_control_list_mapping_sid = await post(
            `/SIP/Domains/${domainSid}/Auth/Calls/IpAccessControlListMappings.json`,
            { IpAccessControlListSid: made.ip_access_control_list_sid },
            'Twilio map IP access list',
          );
        }
      } catch (error) {
        await this.deleteSipAuth(domainSid, made).catch(() => {});
        throw error;
      }
      return made;
    },
    /** Removes the lists made for a SIP domain (their mappings first); what Twilio no longer has counts as removed. */
    async deleteSipAuth(domainSid: string, made: SipAuthResources): Promise<void> {
      if (made.credential_list_mapping_sid)
        await remove(
          `/SIP/Domains/${domainSid}/Auth/Calls/CredentialListMappings/${made.credential_list_mapping_sid}.json`,
          'Twilio unmap credential list',
        );
      if (made.ip_access_control_list_mapping_sid)
        await remove(
          `/SIP/Domains/${domainSid}/Auth/Calls/IpAccessControlListMappings/${made.ip_access_control_list_mapping_sid}.json`,
          'Twilio unmap IP access list',
        );
      if (made.credential_list_sid) await remove(`/SIP/CredentialLists/${made.credential_list_sid}.json`, 'Twilio delete credential list');
      if (made.ip_access_control_list_sid)
        await remove(`/SIP/IpAccessControlLists/${made.ip_access_control_list_sid}.json`, 'Twilio delete IP access list');
    },
  };
}

interface VapiOptions {
  base: string;
  headers: Record<string, string>;
  callbackBaseUrl: string;
  connectionId: string | null;
  webhookSecret: string;
  timeoutMs: number;
}

const VAPI_NUMBER_FIELDS = ['assistantId', 'squadId', 'workflowId', 'server'] as const;

export function vapiInboundRouting(o: VapiOptions) {
  const json = (method: string, body: unknown) => ({
    method,
    headers: { ...o.headers, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const numberUrl = (id: string) => `${o.base}/phone-number/${encodeURIComponent(id)}`;
  const server = { url: vapiInboundUrl(o.callbackBaseUrl, o.connectionId), headers: { 'x-vapi-secret': o.webhookSecret } };

  const routing: InboundRouting = {
    async routeNumber(id, keep) {
      const read = await exchange(numberUrl(id), { method: 'GET', headers: o.headers }, o.timeoutMs, 'Vapi fetch number');
      if (!ok(read)) fail(read, 'Vapi fetch number');
      const current = read.body as Record<string, unknown>;
      const currentUrl = (current.server as { url?: unknown } | undefined)?.url;
      const ours = typeof currentUrl === 'string' && currentUrl.split('?')[0] === server.url.split('?')[0];
      await keep(ours ? null : Object.fromEntries(VAPI_NUMBER_FIELDS.map((f) => [f, current[f] ?? null])));
      const response = await exchange(
        numberUrl(id),
        json('PATCH', { assistantId: null, squadId: null, workflowId: null, server }),
        o.timeoutMs,
        'Vapi update number',
      );
      if (!ok(response)) fail(response, 'Vapi update number');
    },
    async restoreNumber(id, previous) {
      const body = Object.fromEntries(VAPI_NUMBER_FIELDS.map((f) => [f, previous?.[f] ?? null]));
      const response = await exchange(numberUrl(id), json('PATCH', body), o.timeoutMs, 'Vapi update number');
      if (!ok(response) && response.status !== 404) fail(response, 'Vapi update number');
    },
  };

  return {
    ...routing,
    /** A Vapi SIP number for the agent, with digest authentication; its calls ask the service for their assistant. */
    async createSipNumber(sipUri: string, agentId: string, auth: { username: string; password: string }) {
      const response = await exchange(
        `${o.base}/phone-number`,
        json('POST', { provider: 'vapi', sipUri, name: `Agent ${agentId}`.slice(0, 40), authentication: auth, server }),
        o.timeoutMs,
        'Vapi create SIP number',
      );
      if (!ok(response)) fail(response, 'Vapi create SIP number');
      const made = response.body as { id?: string; sipUri?: string };
      if (!made.id) throw new ProviderError('Vapi create SIP number answered without an id', response.status);
      return { provider_id: made.id, sip_uri: made.sipUri ?? sipUri };
    },
    async deleteSipNumber(id: string) {
      const response = await exchange(numberUrl(id), { method: 'DELETE', headers: o.headers }, o.timeoutMs, 'Vapi delete SIP number');
      if (!ok(response) && response.status !== 404) fail(response, 'Vapi delete SIP number');
    },
  };
}
