import * as conversations from '../../db/conversations';
import { callByKey, markProviderCallPlaced } from '../../db/dialer-provider-calls';
import { isFinalCallStatus, type CallEvent } from '../../domain/campaigns';
import { forbiddenAction, notFound, unauthenticated, unavailable } from '../../domain/errors';
import { twilioCallStatus, twilioEvent } from '../../platform/adapters/dialers/twilio-status';
import { verifyTwilioSignature } from '../../platform/adapters/dialers/twilio-signature';
import { verifyVapiSecret } from '../../platform/adapters/dialers/vapi-signature';
import { vapiEvent, type VapiCallReport } from '../../platform/adapters/dialers/vapi-status';
import type { ServiceDeps } from '../deps';
import { callbackAccount } from '../integrations/telephony-accounts';
import { signalDispatcher } from './dispatch';

// The providers' own signed callbacks (Twilio status callbacks, Vapi server messages), verified as each
// provider signs them and handed to the organization's dispatcher as call events, like
// POST /campaign/call-events; each verified with the account that placed the call (an organization's
// connected account, named by `account` in the URL, or the deployment's). A forged one is 401; a genuine one older than
// TELEPHONY_CALLBACK_MAX_AGE_SECONDS (a replay) is 403; one whose event the call already shows (a
// duplicate, or progress behind what is recorded) is acknowledged and changes nothing.

type Deps = Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>;
export type CallbackAnswer = { status: 'accepted' | 'ignored' };

const RANK: Record<string, number> = { queued: 0, ringing: 1, in_progress: 2 };
const rankOf = (status: string) => (isFinalCallStatus(status) ? 3 : (RANK[status] ?? 0));

function assertFresh(deps: Pick<ServiceDeps, 'config'>, sentAt: number | null): void {
  if (sentAt === null) return;
  const age = Date.now() - sentAt;
  if (age > deps.config.TELEPHONY_CALLBACK_MAX_AGE_SECONDS * 1000)
    throw forbiddenAction('Callback too old: its timestamp is outside the accepted window');
}

/**
 * Hands the event to the dispatcher unless the call already shows it (or a later one). `orgId`: the
 * organization whose connected account signed the callback; another organization's call is not found.
 */
async function apply(deps: Deps, provider: string, key: string, event: CallEvent | null, orgId: string | null): Promise<CallbackAnswer> {
  const call = await callByKey(deps.sql, key);
  if (!call || (orgId && call.org_id !== orgId)) throw notFound('Call not found');
  if (!event) return { status: 'ignored' }; // a status or message the service does not read
  if (event.provider_call_id) await markProviderCallPlaced(deps.sql, provider, event.idempotency_key, event.provider_call_id);
  if (isFinalCallStatus(call.status) || rankOf(event.status) <= rankOf(call.status)) return { status: 'ignored' };
  await signalDispatcher(deps, call.org_id, [event]);
  return { status: 'accepted' };
}

/**
 * What must hold before a Twilio request's body is read: a signature of the right shape (401), and,
 * for the deployment's account (no `account` in the URL), Twilio configured (503).
 */
export function assertTwilioSigned(deps: Pick<ServiceDeps, 'config'>, signature: string, account: string | undefined): void {
  if (!account && (deps.config.DIALER !== 'twilio' || !deps.config.TWILIO_AUTH_TOKEN))
    throw unavailable('Twilio callbacks are not configured in this deployment');
  if (!/^[A-Za-z0-9+/]{27}=$/.test(signature)) throw unauthenticated('Invalid X-Twilio-Signature');
}

/**
 * A Twilio request signed by the account it names (`account`: an organization's connection, else the
 * deployment's): the signature over `url` and `params`, and the AccountSid. Returns the organization
 * the account belongs to (null: the deployment's).
 */
export async function verifyTwilioRequest(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  request: { url: string; params: Record<string, string>; signature: string; account?: string },
): Promise<string | null> {
  assertTwilioSigned(deps, request.signature, request.account);
  const { orgId, account } = await callbackAccount(deps, 'twilio', request.account);
  if (account.provider !== 'twilio' || !verifyTwilioSignature(account.authToken, request.signature, request.url, request.params))
    throw unauthenticated('Invalid X-Twilio-Signature');
  if (request.params.AccountSid !== account.accountSid) throw forbiddenAction('Request of another Twilio account');
  return orgId;
}

/** A Twilio status callback: `url` is the full public URL Twilio requested (query included), `params` its form. */
export async function acceptTwilioStatus(
  deps: Deps,
  request: { url: string; key: string; params: Record<string, string>; signature: string; account?: string },
): Promise<CallbackAnswer> {
  const orgId = await verifyTwilioRequest(deps, request);
  const { params } = request;
  const sentAt = params.Timestamp ? Date.parse(params.Timestamp) : Number.NaN;
  assertFresh(deps, Number.isNaN(sentAt) ? null : sentAt);
  const event = twilioEvent(request.key, {
    sid: params.CallSid ?? '',
    status: params.CallStatus ?? '',
    answeredBy: params.AnsweredBy,
    duration: params.CallDuration,
    endedAt: isFinalCallStatus(twilioCallStatus(params.CallStatus ?? '') ?? '') ? params.Timestamp : undefined,
    recordingUrl: params.RecordingUrl,
    sipResponseCode: params.SipResponseCode,
    errorCode: params.ErrorCode,
  });
  return apply(deps, 'twilio', request.key, event, orgId);
}

/**
 * Twilio's asynchronous answering-machine verdict of a campaign call: kept in the call's outcome and
 * told to the engine holding the conversation, which follows the agent's `end_on_voicemail` (hang up, or
 * leave its message after the beep). A verdict for a call no engine holds yet waits in the outcome for it.
 */
export async function acceptTwilioAmd(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  request: { url: string; key: string; params: Record<string, string>; signature: string; account?: string },
): Promise<CallbackAnswer> {
  const orgId = await verifyTwilioRequest(deps, request);
  const call = await callByKey(deps.sql, request.key);
  if (!call || (orgId && call.org_id !== orgId)) throw notFound('Call not found');
  const answeredBy = request.params.AnsweredBy ?? 'unknown';
  const detection = Number(request.params.MachineDetectionDuration);
  const conversation = await conversations.recordAnsweredBy(
    deps.sql,
    call.org_id,
    request.key,
    answeredBy,
    Number.isFinite(detection) ? Math.round(detection) : null,
  );
  if (!conversation || isFinalCallStatus(call.status)) return { status: 'ignored' };
  await conversations.notifyVoiceEngines(deps.sql, { conversation, answered_by: answeredBy });
  return { status: 'accepted' };
}

/**
 * What must hold before a Vapi message's body is read: the secret of the account the URL names (the
 * organization's connection, else VAPI_WEBHOOK_SECRET: 503 without one), 401 when it differs. Returns
 * the organization of a connected account (null: the deployment's).
 */
export async function verifyVapiSecretOf(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  secret: string | undefined,
  account: string | undefined,
): Promise<string | null> {
  const { orgId, account: settings } = await callbackAccount(deps, 'vapi', account);
  if (settings.provider !== 'vapi' || !settings.webhookSecret || !verifyVapiSecret(settings.webhookSecret, secret))
    throw unauthenticated('Invalid x-vapi-secret');
  return orgId;
}

export interface VapiMessage {
  type: string;
  timestamp?: number | string;
  status?: string;
  endedReason?: string;
  startedAt?: string;
  endedAt?: string;
  durationSeconds?: number;
  recordingUrl?: string;
  transcript?: string;
  summary?: string;
  cost?: number;
  artifact?: { recordingUrl?: string; transcript?: string };
  analysis?: { summary?: string };
  call?: { id: string; status?: string; metadata?: Record<string, unknown> | null; startedAt?: string; endedAt?: string };
}

/** The report a message makes; status updates of `ended` wait for the end-of-call report, which carries the artifacts. */
function vapiReport(m: VapiMessage): VapiCallReport | null {
  const call = m.call!;
  if (m.type === 'status-update') {
    const status = m.status ?? call.status ?? '';
    return status && status !== 'ended' ? { id: call.id, status } : null;
  }
  if (m.type === 'end-of-call-report') {
    return {
      id: call.id,
      status: 'ended',
      endedReason: m.endedReason,
      startedAt: m.startedAt ?? call.startedAt,
      endedAt: m.endedAt ?? call.endedAt,
      durationSeconds: m.durationSeconds,
      recordingUrl: m.artifact?.recordingUrl ?? m.recordingUrl,
      transcript: m.artifact?.transcript ?? m.transcript,
      summary: m.analysis?.summary ?? m.summary,
      cost: m.cost,
    };
  }
  return null;
}

/** A Vapi server message (its secret already checked by verifyVapiSecretOf, which named `orgId`). */
export async function acceptVapiMessage(deps: Deps, message: VapiMessage, orgId: string | null): Promise<CallbackAnswer> {
  const sentAt = typeof message.timestamp === 'number' ? message.timestamp : message.timestamp ? Date.parse(message.timestamp) : Number.NaN;
  assertFresh(deps, Number.isNaN(sentAt) ? null : sentAt);
  const key = message.call?.metadata?.idempotency_key;
  if (typeof key !== 'string' || !message.call) throw notFound('Call not found');
  const report = vapiReport(message);
  return apply(deps, 'vapi', key, report ? vapiEvent(key, report) : null, orgId);
}
