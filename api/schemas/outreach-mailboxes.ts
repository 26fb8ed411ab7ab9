import { z } from 'zod';
import {
  DAILY_LIMIT_MAX,
  DAILY_LIMIT_MIN,
  WARMUP_DAYS_DEFAULT,
  WARMUP_DAYS_MAX,
  WARMUP_DAYS_MIN,
  WARMUP_START_PER_DAY_DEFAULT,
  WINDOW_END,
  WINDOW_START,
} from '../../domain/outreach/mailboxes';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { secretField } from '../secret-fields';
import { TIME_ZONE_DESCRIPTION, TIME_ZONE_NAMES, Timestamp, Uuid } from './common';

const Host = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$/, 'must be a host name or an IP address');
const Port = z.number().int().min(1).max(65535);
const Username = z.string().min(1).max(320);
const Password = secretField(
  z.string().min(1).max(1000),
  'Write-only: stored encrypted as a workflow credential, never returned (a 422 never echoes it)',
);

const SmtpSettings = z.strictObject({
  host: Host,
  port: Port,
  secure: z
    .boolean()
    .openapi({ description: 'true: TLS from the first byte (port 465); false: plain, upgraded by STARTTLS when the server offers it' }),
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
const WindowStart = z.string().regex(WINDOW_START, 'must be HH:MM (00:00-23:59)').openapi({ example: '09:00' });
const WindowEnd = z.string().regex(WINDOW_END, 'must be HH:MM (00:01-24:00)').openapi({ example: '17:00' });
const WindowDays = z
  .array(z.number().int().min(1).max(7))
  .min(1)
  .max(7)
  .refine((days) => new Set(days).size === days.length, 'days must not repeat')
  .transform((days) => [...days].sort((a, b) => a - b))
  .openapi({ description: 'ISO weekdays: 1 Monday … 7 Sunday', uniqueItems: true });
const TimeZone = z
  .string()
  .min(1)
  .max(64)
  .openapi({
    enum: [...TIME_ZONE_NAMES],
    description: `${TIME_ZONE_DESCRIPTION}, stored in its canonical spelling (an unknown zone is a 400)`,
    example: 'Europe/Paris',
  });

const WarmupEnabled = z.boolean().openapi({
  description:
    'While on, sequences send at most the warm-up volume a day: warmup_start_per_day on the local day it was switched on, rising in a straight line (rounded down) to daily_limit on day warmup_days, then daily_limit. Switching it on (again) starts the ramp that day',
});
const WarmupStartPerDay = z
  .number()
  .int()
  .min(DAILY_LIMIT_MIN)
  .max(DAILY_LIMIT_MAX)
  .openapi({
    description: `Warm-up volume of its first day (default ${WARMUP_START_PER_DAY_DEFAULT}); above daily_limit it is daily_limit`,
  });
const WarmupDays = z
  .number()
  .int()
  .min(WARMUP_DAYS_MIN)
  .max(WARMUP_DAYS_MAX)
  .openapi({ description: `Local days the ramp takes to reach daily_limit (default ${WARMUP_DAYS_DEFAULT}); 1 means no ramp` });

const SendGap = z
  .strictObject({ min_seconds: z.number().int().min(0).max(86_400), max_seconds: z.number().int().min(0).max(86_400) })
  .refine((g) => g.min_seconds <= g.max_seconds, { message: 'min_seconds must not exceed max_seconds', path: ['max_seconds'] })
  .openapi({
    description:
      'The random pause after each send of the mailbox, drawn from [min_seconds, max_seconds] (default 60-180; 0-0 sends without spacing). min_seconds must not exceed max_seconds (422)',
  });

const Settings = {
  send_gap: SendGap.optional(),
  daily_limit: DailyLimit.optional(),
  window_start: WindowStart.optional(),
  window_end: WindowEnd.optional(),
  window_days: WindowDays.optional(),
  timezone: TimeZone.optional(),
  warmup_enabled: WarmupEnabled.optional(),
  warmup_start_per_day: WarmupStartPerDay.optional(),
  warmup_days: WarmupDays.optional(),
};

export const ConnectMailboxBody = z.strictObject({
  email_address: Email,
  display_name: DisplayName.nullable().optional(),
  smtp: SmtpSettings,
  imap: ImapSettings.nullable().optional(),
  verify_smtp: z
    .boolean()
    .optional()
    .openapi({ description: 'Connect and log in to the SMTP server before saving; a failure is a 400 and nothing is saved' }),
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
  warmup_enabled: WarmupEnabled.optional().openapi({ description: 'Default true: a new domain warms up' }),
  warmup_start_per_day: WarmupStartPerDay.optional(),
  warmup_days: WarmupDays.optional(),
});

export const PatchMailboxBody = z
  .strictObject({ display_name: DisplayName.nullable().optional(), ...Settings })
  .openapi({ description: 'At least one field (an empty body is a 400)' });

export const MailboxParams = z.object({ mailbox_id: Uuid });

export const MailboxListQuery = z.object({
  status: z.enum(['active', 'paused']).optional(),
  domain_id: Uuid.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorQuery(CreatedCursor),
});

const ServerView = z.object({ host: z.string(), port: z.number().int(), secure: z.boolean(), username: z.string().nullable() });

export const Mailbox = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    email_address: z.string(),
    display_name: z.string().nullable(),
    kind: z
      .enum(['smtp', 'simulated'])
      .openapi({ description: 'simulated: delivered to files by the built-in simulated provider, nothing leaves the service' }),
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
    warmup_started_at: Timestamp.nullable().openapi({ description: 'When warm-up was switched on (its day 1); null while it is off' }),
    warmup_start_per_day: z.number().int(),
    warmup_days: z.number().int(),
    send_gap: z.object({ min_seconds: z.number().int(), max_seconds: z.number().int() }),
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
    cap_today: z
      .number()
      .int()
      .min(0)
      .openapi({ description: 'What may go out today: daily_limit, or the warm-up volume while it is lower' }),
    sent_today: z.number().int().min(0).openapi({ description: 'Messages counted against today’s cap' }),
    remaining_today: z.number().int().min(0).openapi({ description: 'cap_today minus sent_today, at least 0' }),
    warmup: z
      .object({
        started_at: Timestamp,
        day: z.number().int().min(1).openapi({ description: 'Today’s warm-up day: 1 on the local day it was switched on' }),
        days: z.number().int(),
        start_per_day: z.number().int(),
        volume_today: z.number().int().openapi({ description: 'What the ramp allows today' }),
        complete: z.boolean().openapi({ description: 'The ramp has reached daily_limit' }),
      })
      .nullable()
      .openapi({ description: 'Null while warm-up is off' }),
  })
  .openapi('OutreachMailboxHealth');
