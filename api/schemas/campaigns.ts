import { z } from 'zod';
import { DEFAULT_CALLING_WINDOW, isValidTimeZone, minutesOf } from '../../domain/campaign-schedule';
import { CALL_STATUSES, CAMPAIGN_STATUSES, CONTACT_STATES } from '../../domain/campaigns';
import { CALLS_PER_SECOND_MAX, CALLS_PER_SECOND_PER_NUMBER_MAX } from '../../domain/pacing';
import { ABSENT, refusing } from '../../domain/schema-rules';
import { TIME_ZONE_DESCRIPTION, TIME_ZONE_NAMES } from './common';
import { PhoneNumberInput, phoneNumberField } from './phone-numbers';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Timestamp, Uuid, TimestampInput, timestampInput } from './common';

export const CampaignStatusEnum = z.enum(CAMPAIGN_STATUSES).openapi('CampaignStatus');
export const ContactStateEnum = z.enum(CONTACT_STATES).openapi('CampaignContactStatus');

/** Contacts one request may carry; larger campaigns add theirs in several requests. */
export const MAX_CONTACTS_PER_REQUEST = 10_000;
export const CAMPAIGN_LIST_DEFAULT = 50;
export const CAMPAIGN_LIST_MAX = 200;

const TimeZone = z
  .string()
  .max(64)
  .refine(isValidTimeZone, 'must be an IANA time zone such as Europe/Paris')
  .openapi({ enum: [...TIME_ZONE_NAMES], description: TIME_ZONE_DESCRIPTION });
const JsonObject = z.record(z.string(), z.unknown());

export const CallingWindow = z
  .object({
    start: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM'),
    end: z.string().regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'must be HH:MM (24:00 allowed)'),
    days: z
      .array(z.number().int().min(1).max(7))
      .min(1)
      .max(7)
      .openapi({ description: 'ISO weekdays, 1 = Monday … 7 = Sunday', uniqueItems: true }),
  })
  .strict()
  .refine((w) => minutesOf(w.start) < minutesOf(w.end), { message: 'start must be before end', path: ['end'] })
  .refine((w) => new Set(w.days).size === w.days.length, { message: 'days must not repeat', path: ['days'] })
  .openapi('CallingWindow', { description: "Local wall-clock hours in each contact's own time zone" });

export const CampaignContactInput = z
  .object({
    external_id: z.string().trim().min(1).max(200).optional(),
    phone_numbers: z
      .array(PhoneNumberInput)
      .min(1)
      .max(10)
      .openapi({ description: 'Attempts rotate through them, first number first; each E.164 and valid for its region' }),
    timezone: TimeZone.optional().openapi({ description: "IANA zone of the contact; default the campaign's" }),
    scheduled_at: timestampInput('Not called before this instant').optional(),
    agent_id: Uuid.optional(),
    agent_config: JsonObject.optional(),
    agent_number: phoneNumberField('The number the call comes from').optional(),
    agent_version: z.number().int().min(1).max(2_147_483_647).optional(),
    initial_context: z.string().max(20_000).optional(),
    data: JsonObject.optional().openapi({ description: 'Free-form; the simulated dialer reads data.simulate.outcomes (one per attempt)' }),
  })
  .strict()
  .openapi('CampaignContactInput');

const Contacts = z.array(CampaignContactInput).max(MAX_CONTACTS_PER_REQUEST);

export const CreateCampaignBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    external_id: z.string().trim().min(1).max(200).optional(),
    configuration_id: Uuid.optional(),
    agent_number: phoneNumberField('The number the calls come from').optional(),
    priority: z.number().int().min(0).max(999_999).default(0),
    agent_id: Uuid.optional(),
    version: z.number().int().min(1).max(2_147_483_647).optional().openapi({ description: 'Agent version the calls use' }),
    contacts: Contacts.default([]),
    timezone: TimeZone.default('UTC').openapi({ description: 'Zone of contacts that give none' }),
    calling_window: CallingWindow.default(DEFAULT_CALLING_WINDOW),
    max_attempts: z.number().int().min(1).max(10).default(3),
    retry_backoff_seconds: z
      .number()
      .int()
      .min(1)
      .max(604_800)
      .default(600)
      .openapi({ description: 'Wait after the first failed attempt; doubles per attempt, at most a day' }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.agent_id) return;
    body.contacts.forEach((c, i) => {
      if (!c.agent_id)
        ctx.addIssue({
          code: 'custom',
          path: ['contacts', i, 'agent_id'],
          message: 'agent_id is required on the contact when the campaign has none',
        });
    });
  })
  // The same rule as the document states it: refused is a campaign without an agent that has a contact without one.
  .meta({
    description: 'The campaign names an agent (agent_id), or each of its contacts does (else 422 naming the contact)',
    ...refusing({ required: ['contacts'], properties: { agent_id: ABSENT, contacts: { contains: { properties: { agent_id: ABSENT } } } } }),
  })
  .openapi('CreateCampaignRequest');

export const AddContactsBody = z
  .object({ contacts: Contacts.min(1) })
  .strict()
  .openapi('AddCampaignContactsRequest');

export const Campaign = z
  .object({
    id: Uuid,
    external_id: z.string().nullable(),
    organization_id: Uuid,
    name: z.string(),
    status: CampaignStatusEnum,
    configuration_id: Uuid.nullable(),
    agent_number: z.string().nullable(),
    priority: z.number().int(),
    agent_id: Uuid.nullable(),
    version: z.number().int().nullable(),
    timezone: z.string(),
    calling_window: z.object({ start: z.string(), end: z.string(), days: z.array(z.number().int()) }),
    max_attempts: z.number().int(),
    retry_backoff_seconds: z.number().int(),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string(),
    modified_by: z.string(),
    closed_at: Timestamp.nullable(),
    simulated: z.boolean().openapi({
      description:
        "true: the organization's calls go through the simulated dialer (no telephony account of its own and none configured, " +
        'DIALER_SIMULATED_ALLOWED on): nobody is really called; false otherwise',
    }),
  })
  .openapi('Campaign');

export const CampaignProgress = z
  .object({
    total: z.number().int(),
    pending: z.number().int(),
    calling: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    canceled: z.number().int(),
  })
  .openapi('CampaignProgress', { description: 'Contacts per state' });

export const CampaignDetail = Campaign.extend({ progress: CampaignProgress }).openapi('CampaignDetail');

export const CampaignList = z.object({ data: z.array(Campaign), pagination: CursorPagination }).openapi('CampaignList');

const Limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(CAMPAIGN_LIST_MAX)
  .default(CAMPAIGN_LIST_DEFAULT)
  .openapi({ description: `Page size, default ${CAMPAIGN_LIST_DEFAULT}, at most ${CAMPAIGN_LIST_MAX}` });

export const CampaignListQuery = z.object({ status: CampaignStatusEnum.optional(), limit: Limit, cursor: cursorQuery(CreatedCursor) });
export const ContactListQuery = z.object({ status: ContactStateEnum.optional(), limit: Limit, cursor: cursorQuery(CreatedCursor) });

export const CampaignContact = z
  .object({
    id: Uuid,
    campaign_id: Uuid,
    external_id: z.string().nullable(),
    phone_numbers: z.array(z.string()),
    timezone: z.string().nullable(),
    scheduled_at: Timestamp.nullable(),
    agent_id: Uuid.nullable(),
    agent_number: z.string().nullable(),
    agent_version: z.number().int().nullable(),
    status: ContactStateEnum,
    attempts: z.number().int(),
    next_attempt_at: Timestamp.nullable(),
    last_outcome: z.string().nullable(),
    data: JsonObject.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('CampaignContact');

export const ContactList = z.object({ data: z.array(CampaignContact), pagination: CursorPagination }).openapi('CampaignContactList');

export const ContactsAdded = z
  .object({ campaign_id: Uuid, added: z.number().int(), progress: CampaignProgress })
  .openapi('CampaignContactsAdded');

export const ConcurrencySettingsBody = z
  .object({
    concurrency_limit: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .openapi({ description: 'Calls in flight at most across all campaigns; 0 stops new calls' }),
    calls_per_second: z
      .number()
      .int()
      .min(1)
      .max(CALLS_PER_SECOND_MAX)
      .optional()
      .openapi({
        description:
          "Calls started per second at most through the organization's telephony account (Twilio's default is 1 per account); " +
          'omitted: unchanged (the deployment default, 1, until set)',
      }),
    calls_per_second_per_number: z.number().int().min(1).max(CALLS_PER_SECOND_PER_NUMBER_MAX).optional().openapi({
      description:
        'Calls started per second at most from one caller number (agent_number, or the account default); omitted: unchanged (default 1)',
    }),
  })
  .strict()
  .openapi('ConcurrencySettingsRequest');

export const ConcurrencySettings = z
  .object({
    organization_id: Uuid,
    concurrency_limit: z.number().int(),
    calls_per_second: z.number().int().openapi({ description: 'Calls started per second at most through the account' }),
    calls_per_second_per_number: z.number().int().openapi({ description: 'Calls started per second at most from one caller number' }),
    active: z.number().int().openapi({ description: 'Calls in flight right now' }),
    created_at: Timestamp.nullable(),
    updated_at: Timestamp.nullable(),
    created_by: z.string().nullable(),
    modified_by: z.string().nullable(),
  })
  .openapi('ConcurrencySettings', { description: 'Timestamps and authors are null while the default applies' });

export const CampaignIdParams = z.object({ id: Uuid });

export const CallEventBody = z
  .object({
    idempotency_key: z.string().min(1).max(200).openapi({ description: 'The attempt key the call was placed with' }),
    status: z.enum(CALL_STATUSES),
    provider_call_id: z.string().max(200).optional(),
    started_at: TimestampInput.optional(),
    ended_at: TimestampInput.optional(),
    duration_seconds: z.number().int().min(0).max(86_400).optional(),
    outcome: JsonObject.optional(),
  })
  .openapi('CallEvent', { description: 'Unknown fields are ignored, so providers may send more' });

export const CallEventAccepted = z.object({ status: z.literal('accepted') }).openapi('CallEventAccepted');
export const CallEventHeaders = z.object({
  'x-dialer-signature': z
    .string()
    .optional()
    .openapi({ description: 'sha256=<hex HMAC-SHA256 of the raw body with DIALER_CALLBACK_SECRET>' }),
});
