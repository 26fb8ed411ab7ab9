import { z } from 'zod';
import { NEXT_SEND_REASONS } from '../../domain/outreach/next-send';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Timestamp, timestampInput, Uuid } from './common';
import {
  ENROLLMENT_STATUSES,
  MAX_DELAY_DAYS,
  MAX_ENROLL_BATCH,
  MAX_POOL,
  MAX_STEPS,
  MAX_VARIANTS,
  SEQUENCE_STATUSES,
} from '../../domain/outreach/sequences';
import { TEMPLATE_VARIABLES } from '../../domain/outreach/templates';
import { NOT_BLANK_PATTERN, trimmedText } from '../../domain/trimmed-text';

const TEMPLATE_HELP = `Template: {{variable}} or {{variable|fallback}} with variable one of ${TEMPLATE_VARIABLES.join(', ')}; an unknown variable is refused (422); a contact without the value gets the fallback, or nothing`;

const Subject = z
  .string()
  .max(998)
  .nullable()
  .optional()
  .openapi({
    description: `Subject ${TEMPLATE_HELP}. Required on the first step; on a later step null sends "Re: <thread subject>" in the same thread`,
  });
const Body = z
  .string()
  .min(1)
  .max(20_000)
  .openapi({ description: `Plain-text body. ${TEMPLATE_HELP}` });
const BodyHtml = z
  .string()
  .max(100_000)
  .nullable()
  .optional()
  .openapi({ description: 'HTML body (optional); values put into it are HTML-escaped' });

const Variant = z.strictObject({ subject: Subject, body: Body, body_html: BodyHtml }).openapi('OutreachStepVariant');

export const StepInput = z
  .strictObject({
    delay_days: z
      .number()
      .int()
      .min(0)
      .max(MAX_DELAY_DAYS)
      .openapi({ description: 'Days after the previous step (the first step: after enrollment or start_at)' }),
    subject: Subject,
    body: Body,
    body_html: BodyHtml,
    variants: z
      .array(Variant)
      .max(MAX_VARIANTS - 1)
      .optional()
      .openapi({ description: 'A/B variants besides the step itself; each enrollment gets one, chosen deterministically and evenly' }),
  })
  .openapi('OutreachStepInput');

const Name = trimmedText(200);

/** A subject the first step (and each of its variants) must have: not null, not only white space. */
const FIRST_SUBJECT = { type: 'string', maxLength: 998, pattern: NOT_BLANK_PATTERN } as const;
const MailboxIds = z
  .array(Uuid)
  .max(MAX_POOL)
  .openapi({ description: 'The mailbox pool; first steps rotate across it, a thread keeps its mailbox' });

export const CreateSequenceBody = z
  .strictObject({
    name: Name,
    steps: z
      .array(StepInput)
      .max(MAX_STEPS)
      .optional()
      // The rule as the document states it: the first step and its variants carry a subject (else 422).
      .meta({
        prefixItems: [
          {
            allOf: [{ $ref: '#/components/schemas/OutreachStepInput' }],
            required: ['subject'],
            properties: { subject: FIRST_SUBJECT, variants: { items: { required: ['subject'], properties: { subject: FIRST_SUBJECT } } } },
          },
        ],
      }),
    mailbox_ids: MailboxIds.optional(),
    stop_on_reply: z.boolean().optional().openapi({ description: 'A reply stops the enrollment (default true); a bounce always does' }),
    start_at: timestampInput('Nothing is sent before this instant').nullable().optional(),
  })
  .openapi('OutreachSequenceCreate');

export const PatchSequenceBody = CreateSequenceBody.partial().openapi('OutreachSequencePatch');

const StepView = z.object({
  index: z.number().int(),
  delay_days: z.number().int(),
  subject: z.string().nullable(),
  body: z.string(),
  body_html: z.string().nullable(),
  variants: z.array(z.object({ subject: z.string().nullable(), body: z.string(), body_html: z.string().nullable() })),
});

export const SequenceStatusEnum = z.enum(SEQUENCE_STATUSES);
export const EnrollmentStatusEnum = z.enum(ENROLLMENT_STATUSES);

export const Sequence = z
  .object({
    id: Uuid,
    name: z.string(),
    status: SequenceStatusEnum,
    steps: z.array(StepView),
    mailbox_ids: z.array(Uuid),
    stop_on_reply: z.boolean(),
    start_at: Timestamp.nullable(),
    enrollment_counts: z
      .record(z.string(), z.number().int())
      .optional()
      .openapi({ description: 'Enrollments per status (single-sequence reads)' }),
    created_by: z.string(),
    modified_by: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    activated_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    archived_at: Timestamp.nullable(),
  })
  .openapi('OutreachSequence');

export const SequenceList = z.object({ data: z.array(Sequence), pagination: CursorPagination }).openapi('OutreachSequenceList');

const limit = (fallback: number, max: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .openapi({ description: `Page size, default ${fallback}, at most ${max}` });

export const SequenceListQuery = z.object({
  status: SequenceStatusEnum.optional(),
  limit: limit(50, 200),
  cursor: cursorQuery(CreatedCursor),
});

export const SequenceParams = z.object({ sequence_id: Uuid });

export const Enrollment = z
  .object({
    id: Uuid,
    sequence_id: Uuid,
    contact_id: Uuid,
    status: EnrollmentStatusEnum,
    next_step: z.number().int(),
    next_send_at: Timestamp.nullable().openapi({
      description:
        'When the next step really goes out: its due time, moved to the mailbox’s next window opening, the next local day when today’s cap is sent, or the end of its send gap; null when final, or when no mailbox can send it (see next_send_reason)',
    }),
    next_send_reason: z.enum(NEXT_SEND_REASONS).nullable().openapi({
      description:
        'Why next_send_at is then: scheduled (the step’s delay), due (goes out in the next cycle), automatic_answer (held until paused_until), retry (the server refused the last attempt for now), sending_window (the mailbox’s window is closed; its next opening), daily_limit (today’s cap is sent; the next local day’s opening), send_gap (the mailbox is spacing its sends), mailbox_unavailable (no active mailbox can send it; next_send_at null), sequence_not_active (draft or paused: when it is due once the sequence runs); null for a final enrollment',
    }),
    thread_id: Uuid.nullable(),
    last_sent_at: Timestamp.nullable(),
    stopped_at: Timestamp.nullable(),
    paused_until: Timestamp.nullable().openapi({
      description:
        'While an active enrollment waits after an automatic answer: when its next step may go out (the return date read, or a default pause)',
    }),
    pause_reason: z.enum(['out_of_office', 'auto_reply']).nullable().openapi({
      description: 'Why the enrollment waits until paused_until: an out-of-office note, or another automatic answer; null when not paused',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('OutreachEnrollment');

export const EnrollBody = z
  .strictObject({ contact_ids: z.array(Uuid).min(1).max(MAX_ENROLL_BATCH).openapi({ description: 'CRM contacts of the organization' }) })
  .openapi('OutreachEnroll');

export const EnrollResult = z
  .object({
    enrolled: z.array(Enrollment),
    skipped: z.array(
      z.object({
        contact_id: Uuid,
        reason: z.enum(['already_enrolled', 'no_email', 'suppressed']).describe('suppressed: the address is on the suppression list'),
      }),
    ),
  })
  .openapi('OutreachEnrollResult');

export const EnrollmentList = z.object({ data: z.array(Enrollment), pagination: CursorPagination }).openapi('OutreachEnrollmentList');
export const EnrollmentListQuery = z.object({
  status: EnrollmentStatusEnum.optional(),
  limit: limit(50, 500),
  cursor: cursorQuery(CreatedCursor),
});
export const EnrollmentParams = z.object({ sequence_id: Uuid, enrollment_id: Uuid });
