import { escapeXml } from '../../../domain/twiml';
import { exchange, expectOk, twilioAuthorization } from './http';

// A call in progress on Twilio, changed by the voice runtime: new TwiML (a transfer's <Dial>) or a
// hang-up. Twilio's Calls resource: POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json.

export interface TwilioLiveCallAccount {
  baseUrl: string;
  accountSid: string;
  authToken: string;
}

const LIVE_CALL_TIMEOUT_MS = 10_000;

export async function updateTwilioCall(
  account: TwilioLiveCallAccount,
  callSid: string,
  change: { twiml: string } | { status: 'completed' },
): Promise<void> {
  const url = `${account.baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${account.accountSid}/Calls/${encodeURIComponent(callSid)}.json`;
  const form = new URLSearchParams('twiml' in change ? { Twiml: change.twiml } : { Status: change.status });
  const response = await exchange(
    url,
    {
      method: 'POST',
      headers: {
        authorization: twilioAuthorization(account.accountSid, account.authToken),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: form.toString(),
    },
    LIVE_CALL_TIMEOUT_MS,
    'Twilio call update',
  );
  expectOk(response, 'Twilio call update', () => null);
}

/**
 * The TwiML of a transfer: a cold transfer dials the destination at once (the caller hears the message
 * first, if any); a warm one has Twilio fetch `whisperUrl` (TwiML spoken to the person who answers,
 * the conversation's summary) before bridging.
 */
export function transferTwiml(
  destination: { phone_number?: string; sip_uri?: string },
  options: { message?: string; whisperUrl?: string },
): string {
  const say = options.message ? `<Say>${escapeXml(options.message)}</Say>` : '';
  const whisperUrl = options.whisperUrl ? ` url="${escapeXml(options.whisperUrl)}"` : '';
  const target = destination.sip_uri
    ? `<Sip>${escapeXml(destination.sip_uri)}</Sip>`
    : `<Number${whisperUrl}>${escapeXml(destination.phone_number ?? '')}</Number>`;
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${say}<Dial>${target}</Dial></Response>`;
}
