import { CallRejected, type CallRequest, type Dialer, type PlacedCall } from './types';
import type { Logger } from '../../core/logger';
import type { ProviderCall, ProviderCallStore } from './call-store';
import { exchange, expectOk, isRequestRefusal, twilioAuthorization, type ProviderResponse } from './http';
import { reconcileCalls } from './reconcile';
import { withAccount } from './accounts';
import { twilioEvent } from './twilio-status';

// Twilio Programmable Voice (REST API 2010-04-01): a call is `POST /Accounts/{AccountSid}/Calls.json`,
// form-encoded, Basic auth with the account SID and auth token. The callee, once answered, is connected
// to the voice engine (the TwiML `answerTwiml` builds: a Media Stream carrying the conversation's token).
// Answering-machine detection runs asynchronously (`AsyncAmd`) so a person hears the agent at once; its
// verdict comes to /telephony/twilio/amd?key=<attempt key>. Progress and outcome come back as signed
// status callbacks to /telephony/twilio/status?key=<attempt key>; reconcile() reads
// `GET /Calls/{Sid}.json` for calls whose final callback never came.

/** Where Twilio posts a call's status callbacks (the key of the attempt goes in the query). */
export const TWILIO_STATUS_PATH = '/telephony/twilio/status';
/** Where Twilio posts the asynchronous answering-machine verdict of a campaign call. */
export const TWILIO_AMD_PATH = '/telephony/twilio/amd';

export interface TwilioDialerOptions {
  baseUrl: string;
  accountSid: string;
  authToken: string;
  /** Caller id when the attempt names none. */
  fromNumber: string | null;
  machineDetection: 'auto' | 'Enable' | 'DetectMessageEnd' | 'off';
  /** What an answered call runs: the TwiML connecting it to the voice engine. */
  answerTwiml: (request: CallRequest, connectionId: string | null) => Promise<string>;
  /** The service's public base URL, which Twilio calls back. */
  callbackBaseUrl: string;
  /** The organization's connection the account is (null: the deployment's account); named in callback URLs. */
  connectionId: string | null;
  timeoutMs: number;
  /** A call is read back by reconcile() only once it is this old. */
  reconcileAfterMs: number;
  calls: ProviderCallStore;
  logger: Logger;
}

interface TwilioCall {
  sid: string;
  status: string;
  answered_by?: string | null;
  duration?: string | null;
  start_time?: string | null;
  end_time?: string | null;
  date_created?: string | null;
}

/** Error codes Twilio answers for a number it will not call (invalid, unreachable, not allowed). */
const NUMBER_ERRORS = new Set([13223, 13224, 13225, 13226, 13227, 21210, 21211, 21212, 21213, 21214, 21215, 21216, 21217, 21401]);

const callbackUrl = (path: string, callbackBaseUrl: string, key: string, connectionId: string | null) =>
  withAccount(`${callbackBaseUrl.replace(/\/+$/, '')}${path}?key=${encodeURIComponent(key)}`, connectionId);

export const twilioStatusCallbackUrl = (callbackBaseUrl: string, key: string, connectionId: string | null = null): string =>
  callbackUrl(TWILIO_STATUS_PATH, callbackBaseUrl, key, connectionId);

export const twilioAmdCallbackUrl = (callbackBaseUrl: string, key: string, connectionId: string | null = null): string =>
  callbackUrl(TWILIO_AMD_PATH, callbackBaseUrl, key, connectionId);

/** The detection mode of a call: `auto` waits for the beep only when the agent leaves a message. */
function machineDetectionOf(setting: TwilioDialerOptions['machineDetection'], agentConfig: Record<string, unknown> | null) {
  if (setting !== 'auto') return setting;
  const endCall = (agentConfig?.end_call ?? {}) as { end_on_voicemail?: boolean; message?: string | null };
  return endCall.end_on_voicemail === false && endCall.message ? 'DetectMessageEnd' : 'Enable';
}

function refusal(r: ProviderResponse): string | null {
  const body = (typeof r.body === 'object' && r.body ? r.body : {}) as { code?: number; message?: string };
  if (body.code && NUMBER_ERRORS.has(body.code)) return `twilio_${body.code}: ${body.message ?? 'number refused'}`;
  return isRequestRefusal(r.status) ? `twilio_${body.code ?? r.status}: ${body.message ?? 'request refused'}` : null;
}

export function createTwilioDialer(options: TwilioDialerOptions): Dialer {
  const { calls, logger } = options;
  const accountPath = `${options.baseUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${options.accountSid}`;
  const headers = {
    Authorization: twilioAuthorization(options.accountSid, options.authToken),
    Accept: 'application/json',
  };

  const get = (path: string, what: string) => exchange(`${accountPath}${path}`, { method: 'GET', headers }, options.timeoutMs, what);

  /**
   * A call an earlier request of this key placed although its answer was lost: Twilio's list of calls
   * to the number from the caller id, created since that request (the list cannot filter on our key).
   */
  async function findPlaced(row: ProviderCall): Promise<string | null> {
    const query = new URLSearchParams({ To: row.phone_number, PageSize: '20' });
    if (row.from_number) query.set('From', row.from_number);
    const response = await get(`/Calls.json?${query}`, 'Twilio list calls');
    expectOk(response, 'Twilio list calls', () => null);
    const since = row.requested_at.getTime() - 60_000;
    const list = ((response.body as { calls?: TwilioCall[] }).calls ?? []).filter(
      (c) => !c.date_created || Date.parse(c.date_created) >= since,
    );
    return list.length ? list[list.length - 1]!.sid : null;
  }

  return {
    name: 'twilio',

    async placeCall(request: CallRequest): Promise<PlacedCall> {
      const from = request.from ?? options.fromNumber;
      if (!from) throw new CallRejected('no_caller_id: neither the campaign nor the contact names an agent_number');
      if (!request.agent_id) throw new CallRejected('agent_not_found');
      const row = await calls.begin({
        idempotency_key: request.idempotency_key,
        org_id: request.org_id,
        provider: 'twilio',
        phone_number: request.to,
        from_number: from,
      });
      if (row.provider_call_id) return { provider_call_id: row.provider_call_id };
      if (row.requests > 1) {
        const sid = await findPlaced(row);
        if (sid) {
          await calls.placed('twilio', request.idempotency_key, sid);
          return { provider_call_id: sid };
        }
      }
      const form = new URLSearchParams({
        To: request.to,
        From: from,
        Twiml: await options.answerTwiml(request, options.connectionId),
        StatusCallback: twilioStatusCallbackUrl(options.callbackBaseUrl, request.idempotency_key, options.connectionId),
        StatusCallbackMethod: 'POST',
      });
      for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
      const detection = machineDetectionOf(options.machineDetection, request.agent_config);
      if (detection !== 'off') {
        form.set('MachineDetection', detection);
        form.set('AsyncAmd', 'true');
        form.set('AsyncAmdStatusCallback', twilioAmdCallbackUrl(options.callbackBaseUrl, request.idempotency_key, options.connectionId));
        form.set('AsyncAmdStatusCallbackMethod', 'POST');
      }
      const response = await exchange(
        `${accountPath}/Calls.json`,
        { method: 'POST', headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }, body: form.toString() },
        options.timeoutMs,
        'Twilio create call',
      );
      expectOk(response, 'Twilio create call', refusal);
      const sid = (response.body as { sid?: string }).sid;
      if (!sid) throw new Error('Twilio create call answered without a call sid');
      await calls.placed('twilio', request.idempotency_key, sid);
      return { provider_call_id: sid };
    },

    reconcile: (orgId: string, keys: string[]) =>
      reconcileCalls({ calls, logger, provider: 'Twilio', afterMs: options.reconcileAfterMs }, orgId, keys, async (row) => {
        const response = await get(`/Calls/${encodeURIComponent(row.provider_call_id!)}.json`, 'Twilio fetch call');
        expectOk(response, 'Twilio fetch call', () => null);
        const call = response.body as TwilioCall;
        return twilioEvent(row.idempotency_key, {
          sid: call.sid,
          status: call.status,
          answeredBy: call.answered_by ?? undefined,
          duration: call.duration,
          startedAt: call.start_time,
          endedAt: call.end_time,
        });
      }),
  };
}
