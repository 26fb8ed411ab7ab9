import type { CallEvent, CallStatus } from '../../../domain/campaigns';
import { providerInstant } from '../../../domain/timestamps';

// Twilio's call statuses (and answering-machine detection) as our call statuses and events.

const STATUSES: Record<string, CallStatus> = {
  queued: 'ringing',
  initiated: 'ringing',
  ringing: 'ringing',
  'in-progress': 'in_progress',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no_answer',
  failed: 'failed',
  canceled: 'canceled',
};

/** `AnsweredBy` values that mean no person took the call (machine_start, machine_end_beep, …, fax). */
export const isMachine = (answeredBy: string | undefined): boolean => !!answeredBy && /^(machine|fax)/.test(answeredBy);

/**
 * Our status for a Twilio call status; null for one we do not know. A completed call a machine
 * answered is `no_answer` (disposition `voicemail`): the person was not reached, so it is retried.
 */
export function twilioCallStatus(status: string, answeredBy?: string): CallStatus | null {
  const ours = STATUSES[status];
  if (ours === 'completed' && isMachine(answeredBy)) return 'no_answer';
  return ours ?? null;
}

/** What a status callback's parameters (or the call resource's fields) say, by name. */
export interface TwilioCallReport {
  sid: string;
  status: string;
  answeredBy?: string;
  /** Seconds, as Twilio writes them (a decimal string). */
  duration?: string | null;
  startedAt?: string | null;
  endedAt?: string | null;
  recordingUrl?: string | null;
  sipResponseCode?: string | null;
  errorCode?: string | null;
}

/** A provider's timestamp, dropped when it is not one or lies outside the years the service takes. */
const isoOf = providerInstant;

/** The call event a Twilio report makes for the attempt `key`; null for a status we do not know. */
export function twilioEvent(key: string, report: TwilioCallReport): CallEvent | null {
  const status = twilioCallStatus(report.status, report.answeredBy);
  if (!status) return null;
  const machine = isMachine(report.answeredBy);
  const duration = report.duration != null && /^\d+$/.test(report.duration) ? Number(report.duration) : undefined;
  const outcome: Record<string, unknown> = {
    provider: 'twilio',
    provider_status: report.status,
    disposition: machine ? 'voicemail' : status,
  };
  if (report.answeredBy) outcome.answered_by = report.answeredBy;
  if (report.recordingUrl) outcome.recording_url = report.recordingUrl;
  if (report.sipResponseCode) outcome.sip_response_code = report.sipResponseCode;
  if (report.errorCode) outcome.error_code = report.errorCode;
  return {
    idempotency_key: key,
    status,
    provider_call_id: report.sid,
    ...(isoOf(report.startedAt) ? { started_at: isoOf(report.startedAt) } : {}),
    ...(isoOf(report.endedAt) ? { ended_at: isoOf(report.endedAt) } : {}),
    ...(duration !== undefined ? { duration_seconds: Math.min(duration, 86_400) } : {}),
    outcome,
  };
}
