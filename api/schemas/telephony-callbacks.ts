import { MAX_STREAM_RESUMES } from '../../domain/voice-resume';
import { z } from 'zod';

// The providers' own callbacks (api/routes/telephony-callbacks.ts): Twilio status callbacks and Vapi
// server messages. Only the fields the service reads are declared; providers send more, and the rest is ignored.

export const TelephonyCallbackAnswer = z.object({ status: z.enum(['accepted', 'ignored']) }).openapi('TelephonyCallbackAnswer', {
  description:
    'accepted: handed to the organization dispatcher; ignored: the call already shows this event, or it is one the service does not read',
});

/** The organization's connected account a callback belongs to (absent: the deployment's account). */
const AccountParam = z.uuid().optional().openapi({
  description: "The organization's telephony connection that placed the call (written into the URL); absent for the deployment's account",
});

export const CallbackAccountQuery = z.object({ account: AccountParam });

export const TwilioStatusQuery = z.object({
  key: z.string().min(1).max(200).openapi({ description: 'The attempt key the call was placed with (written into the callback URL)' }),
  account: AccountParam,
});

export const TwilioStatusHeaders = z.object({
  'x-twilio-signature': z
    .string()
    .optional()
    .openapi({ description: "base64 HMAC-SHA1 of the full URL and the sorted POST parameters, keyed by the account's auth token" }),
});

export const TwilioStatusForm = z
  .object({
    AccountSid: z.string(),
    CallSid: z.string(),
    CallStatus: z.enum(['queued', 'initiated', 'ringing', 'in-progress', 'completed', 'busy', 'no-answer', 'failed', 'canceled']),
    Timestamp: z.string().optional().openapi({ description: 'RFC 2822; older than TELEPHONY_CALLBACK_MAX_AGE_SECONDS is refused' }),
    CallDuration: z.string().optional(),
    AnsweredBy: z.string().optional(),
    RecordingUrl: z.string().optional(),
    SipResponseCode: z.string().optional(),
    ErrorCode: z.string().optional(),
  })
  .openapi('TwilioStatusCallback', { description: "Twilio's status callback parameters (form-encoded); others are ignored" });

export const TwilioAmdForm = z
  .object({
    AccountSid: z.string(),
    CallSid: z.string(),
    AnsweredBy: z.enum(['human', 'machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'fax', 'unknown']),
    MachineDetectionDuration: z.string().optional(),
  })
  .openapi('TwilioAmdCallback', { description: "Twilio's asynchronous answering-machine verdict (form-encoded); others are ignored" });

export const TwilioStreamEndedQuery = z.object({
  conversation: z.uuid().openapi({ description: 'The conversation the stream carried (written into the action URL)' }),
  resumes: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_STREAM_RESUMES)
    .default(0)
    .openapi({ description: 'How many times the call was streamed again already' }),
  account: AccountParam,
});

export const TwilioStreamEndedForm = z
  .object({
    AccountSid: z.string(),
    CallSid: z.string(),
    CallStatus: z.string().optional(),
  })
  .openapi('TwilioConnectAction', { description: "Twilio's request when a <Connect><Stream> ends (form-encoded); others are ignored" });

export const VapiHeaders = z.object({
  'x-vapi-secret': z.string().optional().openapi({
    description: "The secret set on the call's assistant server (the connected account's own, or VAPI_WEBHOOK_SECRET)",
  }),
});

// Four such texts, each character up to six bytes as a JSON escape, stay under BODY_LIMIT_BYTES (5 MiB): a body
// that breaks a field's limit is then always answered 422 for that field, never 413 for its size.
const Text = z.string().max(150_000);

export const VapiMessageBody = z
  .object({
    message: z.object({
      type: z.string().max(100).openapi({ description: 'status-update and end-of-call-report are read; other types are acknowledged' }),
      timestamp: z
        .union([z.number(), z.string().max(100)])
        .optional()
        .openapi({ description: 'milliseconds since the epoch, or ISO 8601; older than TELEPHONY_CALLBACK_MAX_AGE_SECONDS is refused' }),
      status: z.string().max(100).optional(),
      endedReason: z.string().max(200).optional(),
      startedAt: z.string().max(100).optional(),
      endedAt: z.string().max(100).optional(),
      durationSeconds: z.number().optional().openapi({ description: 'a negative value is read as absent' }),
      recordingUrl: z.string().max(4000).optional(),
      transcript: Text.optional(),
      summary: Text.optional(),
      cost: z.number().optional(),
      artifact: z.object({ recordingUrl: z.string().max(4000).optional(), transcript: Text.optional() }).optional(),
      analysis: z.object({ summary: Text.optional() }).optional(),
      call: z
        .object({
          id: z.string().min(1).max(200),
          status: z.string().max(100).optional(),
          metadata: z.record(z.string(), z.unknown()).nullable().optional(),
          startedAt: z.string().max(100).optional(),
          endedAt: z.string().max(100).optional(),
        })
        .optional(),
    }),
  })
  .openapi('VapiServerMessage', { description: 'A Vapi server message; fields other than these are ignored' });
