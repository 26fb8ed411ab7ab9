import { z } from 'zod';
import { BOT_STATUSES, MEETING_PLATFORMS, MEETING_URL_PATTERN, meetingPlatform } from '../../domain/meetings';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { trimmedText } from '../../domain/trimmed-text';
import { Timestamp, Uuid, TimestampInput, timestampInput } from './common';

export const BOT_LIST_DEFAULT = 50;
export const BOT_LIST_MAX = 200;
export const MAX_BOT_CONTACTS = 50;

export const BotStatusEnum = z.enum(BOT_STATUSES).openapi('MeetingBotStatus');

const MeetingUrl = z
  .string()
  .max(2000)
  .refine(
    (url) => meetingPlatform(url) !== null,
    'must be a Zoom (https://zoom.us/j/<id>), Google Meet (https://meet.google.com/abc-defg-hij) or Microsoft Teams (https://teams.microsoft.com/l/meetup-join/…) meeting link',
  )
  .openapi({
    description:
      'An https Zoom, Google Meet or Microsoft Teams meeting link. The pattern gives the links as written; the server reads ' +
      'the link as a URL, so it also takes one that differs only in how it is written (letter case of the scheme or host, ' +
      'the default port :443, percent-escapes, white space around it). No `format: uri`: the server also takes ' +
      'characters outside ASCII in the query or fragment (a URL percent-encodes them), which RFC 3986 does not',
    pattern: MEETING_URL_PATTERN,
  });

export const CreateBotBody = z
  .object({
    meeting_url: MeetingUrl,
    join_at: timestampInput('When the bot joins; now when absent or past').nullable().optional(),
    bot_name: trimmedText(100)
      .nullable()
      .optional()
      .openapi({ description: 'Name the bot shows in the meeting; default "Meeting Notetaker"' }),
    account_id: Uuid.nullable().optional().openapi({ description: 'Account the meeting activity goes on (404 outside the organization)' }),
    deal_id: Uuid.nullable()
      .optional()
      .openapi({ description: "Deal the meeting activity goes on; the deal's account when account_id is absent" }),
    contact_ids: z
      .array(Uuid)
      .max(MAX_BOT_CONTACTS)
      .nullable()
      .optional()
      .openapi({ description: 'Contacts of the organization who attend' }),
  })
  .strict()
  .openapi('MeetingBotCreate');

const Recording = z
  .object({
    id: z.string(),
    url: z.string().nullable().openapi({ description: "The vendor's download link" }),
    started_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    duration_seconds: z.number().int().nullable(),
  })
  .openapi('MeetingRecording');

export const Bot = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    meeting_url: z.string(),
    platform: z.enum(MEETING_PLATFORMS),
    bot_name: z.string(),
    join_at: Timestamp.nullable(),
    account_id: Uuid.nullable(),
    deal_id: Uuid.nullable(),
    contact_ids: z.array(Uuid),
    status: BotStatusEnum,
    status_reason: z.string().nullable().openapi({ description: 'Why a bot failed or was canceled' }),
    vendor: z.string().openapi({ description: '`simulated` (the built-in stand-in) or `recall`' }),
    vendor_bot_id: z.string().nullable(),
    workflow_id: z.string().openapi({ description: 'meeting-bot:<id>' }),
    recording: Recording.nullable(),
    activity_id: Uuid.nullable().openapi({ description: 'The `meeting` activity written with the transcript' }),
    leave_requested_at: Timestamp.nullable(),
    created_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    ended_at: Timestamp.nullable(),
  })
  .openapi('MeetingBot');

export const BotDetail = Bot.extend({
  status_history: z.array(
    z.object({
      status: BotStatusEnum,
      vendor_code: z.string().nullable(),
      sub_code: z.string().nullable(),
      message: z.string().nullable(),
      occurred_at: Timestamp,
    }),
  ),
  transcript: z
    .object({ text: z.string(), attendees: z.array(z.object({ name: z.string(), email: z.string() })) })
    .nullable()
    .openapi({ description: 'Present once the transcript is written to the CRM' }),
}).openapi('MeetingBotDetail');

export const BotList = z.object({ data: z.array(Bot), pagination: CursorPagination }).openapi('MeetingBotList');

export const BotListQuery = z.object({
  status: BotStatusEnum.optional(),
  account_id: Uuid.optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(BOT_LIST_MAX)
    .default(BOT_LIST_DEFAULT)
    .openapi({ description: `Page size, default ${BOT_LIST_DEFAULT}, at most ${BOT_LIST_MAX}` }),
  cursor: cursorQuery(CreatedCursor),
});

export const BotParams = z.object({ bot_id: Uuid });

const Ref = z.object({ id: z.string().max(200), metadata: z.record(z.string(), z.unknown()).nullable().optional() }).loose();

/**
 * The vendor's event (Recall.ai's webhook shape): `event` is `bot.<status code>`, `recording.done`,
 * `transcript.done` or `transcript.failed`; `data.bot.metadata` carries the bot_id and org_id the
 * service gave the vendor's bot. Unknown fields are ignored.
 */
export const CaptureBody = z
  .object({
    event: z.string().min(1).max(200),
    data: z
      .object({
        data: z
          .object({
            code: z.string().max(200).nullable().optional(),
            sub_code: z.string().max(500).nullable().optional(),
            updated_at: TimestampInput.nullable().optional(),
          })
          .loose()
          .nullable()
          .optional(),
        bot: Ref.nullable().optional(),
        recording: Ref.nullable().optional(),
        transcript: Ref.nullable().optional(),
      })
      .loose()
      .nullable()
      .optional(),
  })
  .loose()
  .openapi('MeetingCaptureEvent', {
    example: {
      event: 'bot.in_call_recording',
      data: {
        data: { code: 'in_call_recording', sub_code: null, updated_at: '2026-01-05T15:04:05.000Z' },
        bot: {
          id: '8f1c1a8e-5d5e-4b0a-9a64-7c1f2d4b8e21',
          metadata: { bot_id: '0192f3c4-0000-7000-8000-000000000001', org_id: '0192f3c4-0000-7000-8000-000000000002' },
        },
      },
    },
  });

export const CaptureHeaders = z.object({
  'webhook-id': z.string().optional().openapi({ description: 'Message id (or `svix-id`); a redelivery repeats it' }),
  'webhook-timestamp': z.string().optional().openapi({ description: 'Unix seconds (or `svix-timestamp`); refused beyond five minutes' }),
  'webhook-signature': z
    .string()
    .optional()
    .openapi({ description: '`v1,<base64 HMAC-SHA256>` entries, space separated (or `svix-signature`)' }),
});

export const CaptureAnswer = z.object({ status: z.enum(['accepted', 'ignored']) }).openapi('MeetingCaptureAnswer');
