import type { CallEvent, CallStatus } from '../../../domain/campaigns';
import { providerInstant } from '../../../domain/timestamps';

// Vapi's call statuses and ended reasons as our call statuses and events.

const PROGRESS: Record<string, CallStatus> = {
  scheduled: 'ringing',
  queued: 'ringing',
  ringing: 'ringing',
  'in-progress': 'in_progress',
  forwarding: 'in_progress',
};

/** Ended reasons where the call was held with the person (the conversation ended by either side or a limit). */
const CONVERSED = new Set([
  'assistant-ended-call',
  'assistant-said-end-call-phrase',
  'assistant-ended-call-after-message-spoken',
  'assistant-ended-call-with-hangup-task',
  'assistant-forwarded-call',
  'customer-ended-call',
  'exceeded-max-duration',
  'silence-timed-out',
  'voicemail-left',
]);

/** Our final status for a Vapi `endedReason` (`voicemail` is no_answer: the person was not reached). */
export function vapiEndedStatus(endedReason: string | undefined): CallStatus {
  const reason = endedReason ?? '';
  if (reason === 'customer-busy') return 'busy';
  if (reason === 'customer-did-not-answer' || reason === 'voicemail') return 'no_answer';
  if (reason === 'manually-canceled' || reason === 'scheduled-call-deleted') return 'canceled';
  if (CONVERSED.has(reason)) return 'completed';
  return 'failed';
}

/** Our status for a Vapi call status; `ended` takes its reason into account; null when unknown. */
export function vapiCallStatus(status: string, endedReason?: string): CallStatus | null {
  if (status === 'ended') return vapiEndedStatus(endedReason);
  return PROGRESS[status] ?? null;
}

/** What a Vapi message or call resource says about one call. */
export interface VapiCallReport {
  id: string;
  status: string;
  endedReason?: string;
  startedAt?: string | null;
  endedAt?: string | null;
  durationSeconds?: number | null;
  recordingUrl?: string | null;
  transcript?: string | null;
  summary?: string | null;
  cost?: number | null;
}

/** A provider's timestamp, dropped when it is not one or lies outside the years the service takes. */
const isoOf = providerInstant;

export function vapiEvent(key: string, report: VapiCallReport): CallEvent | null {
  const status = vapiCallStatus(report.status, report.endedReason);
  if (!status) return null;
  const started = isoOf(report.startedAt);
  const ended = isoOf(report.endedAt);
  let duration = typeof report.durationSeconds === 'number' && report.durationSeconds >= 0 ? Math.round(report.durationSeconds) : undefined;
  if (duration === undefined && started && ended && report.status === 'ended')
    duration = Math.max(0, Math.round((Date.parse(ended) - Date.parse(started)) / 1000));
  const outcome: Record<string, unknown> = {
    provider: 'vapi',
    provider_status: report.status,
    disposition: report.endedReason === 'voicemail' ? 'voicemail' : status,
  };
  if (report.endedReason) outcome.ended_reason = report.endedReason;
  if (report.recordingUrl) outcome.recording_url = report.recordingUrl;
  if (report.transcript) outcome.transcript = report.transcript;
  if (report.summary) outcome.summary = report.summary;
  if (typeof report.cost === 'number') outcome.cost_usd = report.cost;
  return {
    idempotency_key: key,
    status,
    provider_call_id: report.id,
    ...(started ? { started_at: started } : {}),
    ...(ended ? { ended_at: ended } : {}),
    ...(duration !== undefined ? { duration_seconds: Math.min(Math.max(0, duration), 86_400) } : {}),
    outcome,
  };
}
