import { z } from 'zod';
import { DAILY_LIMIT_MAX, DAILY_LIMIT_MIN, WINDOW_END, WINDOW_START } from '../../domain/outreach-mailboxes';
import { CursorPagination } from '../pagination';
import { Timestamp, Uuid } from './common';

const Host = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$/, 'must be a host name or an IP address');
const Port = z.number().int().min(1).max(65535);
const Username = z.string().min(1).max(320);
const Password = z.string().min(1).max(1000).openapi({ description: 'Write-only: stored encrypted as a workflow credential, never returned' });

const SmtpSettings = z.strictObject({
  host: Host,
  port: Port,
  secure: z.boolean().openapi({ description: 'true: TLS from the first byte (port 465); false: plain, upgraded by STARTTLS when the server offers it' }),
  username: Username.optional(),
  password: Password.optional(),
});
const ImapSettings = z.strictObject({
  host: Host,
  port: Port,
  secure: z.boolean(),
  username: Username.optional().openapi({ description: 'Defaults to the SMTP username, else the email address' }),
  password: Password.optional().openapi({ description: 'Defaults to the SMTP password' }),
});

const Email = z
  .email()
  .max(320)
  .transform((e) => e.toLowerCase());
const DisplayName = z.string().trim().min(1).max(200);
const DailyLimit = z.number().int().min(DAILY_LIMIT_MIN).max(DAILY_LIMIT_MAX);
const WindowStart = z.string().regex(WINDOW_START, 'must be HH:MM (00:00-23:59)');
const WindowEnd = z.string().regex(WINDOW_END, 'must be HH:MM (00:01-24:00)');
const WindowDays = z
  .array(z.number().int().min(1).max(7))
  .min(1)
  .max(7)
  .refine((days) => new Set(days).size === days.length, 'days must not repeat')
  .transform((days) => [...days].sort((a, b) => a - b))
  .openapi({ description: 'ISO weekdays: 1 Monday … 7 Sunday' });
const TimeZone = z.string().min(1).max(64).openapi({ description: 'IANA time zone, e.g. Europe/Paris (an unknown zone is a 400)', example: 'Europe/Paris' });

const Settings = {
  daily_limit: DailyLimit.optional(),
  window_start: WindowStart.optional(),
  window_end: WindowEnd.optional(),
  window_days: WindowDays.optional(),
  timezone: TimeZone.optional(),
  warmup_enabled: z.boolean().optional(),
};

export const ConnectMailboxBody = z.strictObject({
  email_address: Email,
  display_name: DisplayName.nullable().optional(),
  smtp: SmtpSettings,
  imap: ImapSettings.nullable().optional(),
  verify_smtp: z.boolean().optional().openapi({ description: 'Connect and log in to the SMTP server before saving; a failure is a 400 and nothing is saved' }),
  ...Settings,
});

export const ProvisionMailboxBody = z.strictObject({
  domain_id: Uuid,
  local_part: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$/, 'must be lower-case letters, digits, dots, hyphens or underscores'),
  display_name: DisplayName.nullable().optional(),
  daily_limit: DailyLimit.optional(),
  timezone: TimeZone.optional(),
  warmup_enabled: z.boolean().optional().openapi({ description: 'Default true: a new domain warms up' }),
});

export const PatchMailboxBody = z
  .strictObject({ display_name: DisplayName.nullable().optional(), ...Settings })
  .openapi({ description: 'At least one field (an empty body is a 400)' });

export const MailboxParams = z.object({ mailbox_id: Uuid });

export const MailboxListQuery = z.object({
  status: z.enum(['active', 'paused']).optional(),
  domain_id: Uuid.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().max(500).optional(),
});

const ServerView = z.object({ host: z.string(), port: z.number().int(), secure: z.boolean(), username: z.string().nullable() });

export const Mailbox = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    email_address: z.string(),
    display_name: z.string().nullable(),
    kind: z.enum(['smtp', 'simulated']).openapi({ description: 'simulated: delivered to files by the built-in simulated provider, nothing leaves the service' }),
    origin: z.enum(['connected', 'provisioned']),
    provider: z.string().nullable(),
    domain_id: Uuid.nullable(),
    status: z.enum(['active', 'paused']),
    daily_limit: z.number().int(),
    window_start: z.string(),
    window_end: z.string(),
    window_days: z.array(z.number().int()),
    timezone: z.string(),
    warmup_enabled: z.boolean(),
    smtp: ServerView.nullable(),
    imap: ServerView.nullable(),
    has_password: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string(),
  })
  .openapi('OutreachMailbox');

export const MailboxList = z.object({ data: z.array(Mailbox), pagination: CursorPagination }).openapi('OutreachMailboxList');

export const MailboxHealth = z
  .object({
    mailbox_id: Uuid,
    status: z.enum(['active', 'paused']),
    bounce_count: z.number().int(),
    failure_count: z.number().int(),
    last_bounce_at: Timestamp.nullable(),
    last_failure_at: Timestamp.nullable(),
    daily_limit: z.number().int(),
    local_day: z.string().openapi({ description: "Today in the mailbox's time zone (YYYY-MM-DD)" }),
    sent_today: z.number().int().min(0).openapi({ description: 'Messages counted against today’s limit' }),
    remaining_today: z.number().int().min(0),
  })
  .openapi('OutreachMailboxHealth');
