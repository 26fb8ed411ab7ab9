import type { Config } from '../../core/config';
import { exchange, ProviderError, twilioAuthorization } from './http';

// The telephony account an organization's calls, numbers and SIP endpoints go through: its own,
// connected through the Integrations area (`connectionId` set), or the deployment's one account from
// configuration (DIALER=twilio|vapi, `connectionId` null). Callbacks for a connected account carry
// `account=<connectionId>` in their URL, so the service knows whose secret verifies them before it
// reads their body.

export type TelephonyAccountSettings =
  | { provider: 'twilio'; connectionId: string | null; accountSid: string; authToken: string; fromNumber: string | null }
  | { provider: 'vapi'; connectionId: string | null; apiKey: string; phoneNumberId: string; webhookSecret: string };

/** The deployment's own account (DIALER=twilio|vapi), or null with the simulated dialer. */
export function configuredAccount(config: Config): TelephonyAccountSettings | null {
  switch (config.DIALER) {
    case 'twilio':
      return {
        provider: 'twilio',
        connectionId: null,
        accountSid: config.TWILIO_ACCOUNT_SID!,
        authToken: config.TWILIO_AUTH_TOKEN!,
        fromNumber: config.TWILIO_FROM_NUMBER ?? null,
      };
    case 'vapi':
      return {
        provider: 'vapi',
        connectionId: null,
        apiKey: config.VAPI_API_KEY!,
        phoneNumberId: config.VAPI_PHONE_NUMBER_ID!,
        webhookSecret: config.VAPI_WEBHOOK_SECRET!,
      };
    case 'simulated':
      return null;
  }
}

/** A callback URL naming the connected account it belongs to (unchanged for the deployment's account). */
export function withAccount(url: string, connectionId: string | null): string {
  if (!connectionId) return url;
  return `${url}${url.includes('?') ? '&' : '?'}account=${encodeURIComponent(connectionId)}`;
}

/** What the provider says of a set of keys: whose account they open, and a name a person recognizes. */
export interface VerifiedAccount {
  external_id: string;
  label: string;
}

export type TelephonyKeys =
  | { provider: 'twilio'; account_sid: string; auth_token: string }
  | { provider: 'vapi'; api_key: string; phone_number_id: string };

/** The keys were refused by the provider (401/403), or name something the account does not have (404). */
export class AccountRefused extends Error {}

/**
 * Asks the provider whether the keys open an account, bounded by DIALER_PROVIDER_TIMEOUT_MS: Twilio's
 * account resource (`GET /2010-04-01/Accounts/{sid}.json`, which must be active), Vapi's phone number
 * the calls will be placed from (`GET /phone-number/{id}`). A refusal is AccountRefused; a provider
 * that fails or does not answer is a ProviderError.
 */
export async function verifyAccount(config: Config, keys: TelephonyKeys): Promise<VerifiedAccount> {
  const timeout = config.DIALER_PROVIDER_TIMEOUT_MS;
  if (keys.provider === 'twilio') {
    const url = `${config.TWILIO_API_BASE_URL.replace(/\/+$/, '')}/2010-04-01/Accounts/${keys.account_sid}.json`;
    const authorization = twilioAuthorization(keys.account_sid, keys.auth_token);
    const response = await exchange(
      url,
      { method: 'GET', headers: { Authorization: authorization, Accept: 'application/json' } },
      timeout,
      'Twilio fetch account',
    );
    refuseOrFail(response, 'Twilio fetch account', 'Twilio refused the account SID and auth token');
    const account = response.body as { sid?: string; friendly_name?: string; status?: string };
    if (account.status && account.status !== 'active') throw new AccountRefused(`The Twilio account is ${account.status}, not active`);
    return { external_id: account.sid ?? keys.account_sid, label: account.friendly_name || keys.account_sid };
  }
  const url = `${config.VAPI_API_BASE_URL.replace(/\/+$/, '')}/phone-number/${encodeURIComponent(keys.phone_number_id)}`;
  const response = await exchange(
    url,
    { method: 'GET', headers: { Authorization: `Bearer ${keys.api_key}`, Accept: 'application/json' } },
    timeout,
    'Vapi fetch phone number',
  );
  if (response.status === 404 || response.status === 400)
    throw new AccountRefused('phone_number_id is not a phone number of this Vapi account');
  refuseOrFail(response, 'Vapi fetch phone number', 'Vapi refused the API key');
  const number = response.body as { id?: string; number?: string | null; name?: string | null; sipUri?: string | null };
  return { external_id: number.id ?? keys.phone_number_id, label: number.number || number.name || number.sipUri || keys.phone_number_id };
}

function refuseOrFail(response: { status: number; body: unknown }, what: string, refusal: string): void {
  if (response.status >= 200 && response.status < 300) return;
  if (response.status === 401 || response.status === 403) throw new AccountRefused(refusal);
  const detail = typeof response.body === 'string' ? response.body : JSON.stringify(response.body);
  throw new ProviderError(`${what} answered ${response.status}: ${detail.slice(0, 300)}`, response.status);
}

/** A provider's answer that says the account's keys no longer work (the operator must reconnect). */
export const isAccountRefusal = (error: unknown): boolean =>
  error instanceof AccountRefused || (error instanceof ProviderError && (error.status === 401 || error.status === 403));
