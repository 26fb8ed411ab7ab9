import { IANAZone } from 'luxon';
import { z } from 'zod';
import { MIN_INTERVAL_SECONDS } from '../../domain/credentials';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { NO_NUL_PATTERN } from '../openapi-registry';
import { refusing } from '../../domain/schema-rules';
import { secretField } from '../secret-fields';
import { trimmedText } from '../../domain/trimmed-text';
import { TIME_ZONE_DESCRIPTION, TIME_ZONE_NAMES, Timestamp, Uuid, TimestampInput } from './common';

const Paused = z.boolean().optional().openapi({ description: 'Pause the schedule (it stays, visible in the Temporal UI)' });

// Five fields (minute hour day-of-month month day-of-week) as Temporal reads them, or a named shorthand.
// The pattern is the whole rule: five fields of CRON_FIELD's characters apart, or a named shorthand.
const CRON = /^(@(yearly|annually|monthly|weekly|daily|hourly)|([0-9A-Za-z*/,?#LW-]+\s+){4}[0-9A-Za-z*/,?#LW-]+)$/;
const CRON_FIELD = /^[0-9A-Za-z*/,?#LW-]+$/;

export const RefreshPolicy = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('manual') }),
    z.strictObject({
      type: z.literal('interval'),
      every_seconds: z.number().int().min(MIN_INTERVAL_SECONDS).max(31_536_000),
      paused: Paused,
    }),
    z.strictObject({
      type: z.literal('cron'),
      expression: z
        .string()
        .trim()
        .max(200)
        .regex(CRON, 'must be a five-field cron expression or @daily, @hourly, ...')
        .refine((e) => e.startsWith('@') || e.split(/\s+/).every((f) => CRON_FIELD.test(f)), 'must be a five-field cron expression'),
      timezone: z
        .string()
        .max(100)
        .default('UTC')
        .refine((zone) => IANAZone.isValidZone(zone), 'must be an IANA time zone')
        .openapi({ enum: [...TIME_ZONE_NAMES], description: TIME_ZONE_DESCRIPTION }),
      paused: Paused,
    }),
    z.strictObject({
      type: z.literal('before_expiry'),
      lead_seconds: z.number().int().min(MIN_INTERVAL_SECONDS).max(31_536_000),
      check_every_seconds: z.number().int().min(MIN_INTERVAL_SECONDS).max(86_400).optional(),
      paused: Paused,
    }),
  ])
  .openapi('CredentialRefreshPolicy', {
    description:
      'manual: no schedule. interval: every every_seconds. cron: a cron expression in a time zone. before_expiry: ' +
      'checks every check_every_seconds (default a quarter of the lead, 1-15 min) and refreshes once expires_at - lead_seconds has passed.',
  });

const VALUE_MAX_BYTES = 65_536;
export const CredentialValue = secretField(
  z
    .record(z.string().min(1).max(200), z.unknown())
    .refine((v) => Object.keys(v).length <= 100, 'at most 100 keys')
    .refine((v) => JSON.stringify(v).length <= VALUE_MAX_BYTES, `at most ${VALUE_MAX_BYTES} bytes of JSON`)
    // The key rule and the count as the document states them (the generator drops a record's key schema).
    .meta({ propertyNames: { minLength: 1, maxLength: 200, pattern: NO_NUL_PATTERN }, maxProperties: 100 }),
  `An object (never a bare string), at most 100 keys and ${VALUE_MAX_BYTES} bytes of JSON; write-only (a 422 never echoes it)`,
);

const Name = trimmedText(200);
const Description = z.string().max(2000);
const RefreshInput = z
  .record(z.string(), z.unknown())
  .openapi({ description: "The refresher's input (checked against it); secrets go in the value" });

export const SecretEntry = z
  .object({
    key: z.string(),
    type: z.enum(['string', 'number', 'boolean', 'object', 'array', 'null']),
    description: z.string(),
    source: z.enum(['input', 'refresh']),
    updated_at: Timestamp,
  })
  .openapi('CredentialSecretEntry', { description: 'What one key of the value holds; never the value' });

export const Credential = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    name: z.string(),
    description: z.string(),
    refresher_workflow_id: Uuid.nullable(),
    refresh_input: z.record(z.string(), z.unknown()),
    refresh_policy: z.object({ type: z.enum(['manual', 'interval', 'cron', 'before_expiry']) }).loose(),
    has_value: z.boolean(),
    value_keys: z.array(z.string()),
    expires_at: Timestamp.nullable(),
    last_refresh_status: z.enum(['success', 'failed', 'running']).nullable(),
    last_refresh_at: Timestamp.nullable(),
    last_refresh_error: z.string().nullable(),
    last_refresh_execution_id: Uuid.nullable(),
    refresh_locked_until: Timestamp.nullable(),
    is_refreshing: z.boolean(),
    temporal_schedule_id: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string(),
    modified_by: z.string(),
    secrets: z.array(SecretEntry),
  })
  .openapi('WorkflowCredential');

export const CredentialList = z.object({ data: z.array(Credential), pagination: CursorPagination }).openapi('WorkflowCredentialList');

export const CredentialListQuery = z.object({
  name: z.string().max(200).optional().openapi({ description: 'Case-insensitive substring of the name' }),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: cursorQuery(CreatedCursor),
});

export const CreateCredentialBody = z
  .strictObject({
    name: Name,
    description: Description.optional(),
    refresher_workflow_id: Uuid.nullable().optional(),
    refresh_input: RefreshInput.optional(),
    refresh_policy: RefreshPolicy.optional(),
    value: CredentialValue.optional().openapi({
      description: "Initial material, e.g. a refresher's client_secret or refresh_token; write-only",
    }),
    expires_at: TimestampInput.nullable().optional(),
  })
  // Without a refresher the policy is manual and the input empty (else 400): the document states it too, as the
  // bodies it refuses (no refresher, or null, with a policy other than manual or a non-empty input).
  .openapi('WorkflowCredentialCreate', {
    description: 'Without a refresher_workflow_id the refresh_policy is manual (or left out) and the refresh_input empty (else 400)',
    ...refusing({
      properties: { refresher_workflow_id: { type: 'null' } },
      anyOf: [
        { required: ['refresh_policy'], properties: { refresh_policy: { not: { properties: { type: { const: 'manual' } } } } } },
        { required: ['refresh_input'], properties: { refresh_input: { minProperties: 1 } } },
      ],
    }),
  });

export const PatchCredentialBody = z
  .strictObject({
    name: Name,
    description: Description,
    refresher_workflow_id: Uuid.nullable(),
    refresh_input: RefreshInput,
    refresh_policy: RefreshPolicy,
  })
  .partial()
  .openapi('WorkflowCredentialPatch', { minProperties: 1 });

export const PutValueBody = z
  .strictObject({ value: CredentialValue, expires_at: TimestampInput.nullable().optional() })
  .openapi('WorkflowCredentialValue');

export const CredentialParams = z.object({ credential_id: Uuid });

export const RefreshStarted = z
  .object({ credential_id: Uuid, workflow_id: z.string(), execution_id: Uuid })
  .openapi('WorkflowCredentialRefreshStarted');

export const RefresherList = z
  .object({ data: z.array(z.object({ id: Uuid, kind: z.string(), name: z.string(), description: z.string() })) })
  .openapi('CredentialRefresherList');
