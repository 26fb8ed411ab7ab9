import { z } from 'zod';
import { REPLY_CLASSES } from '../../domain/outreach/replies';
import { givesNone, givesSeveral, refusing } from '../../domain/schema-rules';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Timestamp, Uuid } from './common';

const Bool = z.enum(['true', 'false']).transform((v) => v === 'true');

export const ThreadListQuery = z.object({
  mailbox_id: Uuid.optional(),
  sequence_id: Uuid.optional(),
  unread: Bool.optional().openapi({ description: 'true: threads with unread messages; false: read ones' }),
  needs_reply: Bool.optional().openapi({ description: 'true: the latest message came in and is not answered yet' }),
  limit: z.coerce.number().int().min(1).max(200).default(50).openapi({ description: 'Page size, default 50, at most 200' }),
  cursor: cursorQuery(CreatedCursor),
});

export const ThreadParams = z.object({ thread_id: Uuid });

export const ThreadSummary = z
  .object({
    id: Uuid,
    subject: z.string(),
    counterpart: z.string(),
    mailbox_id: Uuid,
    sequence_id: Uuid.nullable(),
    enrollment_id: Uuid.nullable(),
    contact_id: Uuid.nullable(),
    unread: z.boolean(),
    unread_count: z.number().int(),
    needs_reply: z.boolean(),
    last_message_at: Timestamp,
    created_at: Timestamp,
  })
  .openapi('OutreachThreadSummary');

export const ThreadList = z.object({ data: z.array(ThreadSummary), pagination: CursorPagination }).openapi('OutreachThreadList');

export const ThreadMessage = z
  .object({
    id: Uuid,
    direction: z.enum(['outbound', 'inbound']),
    kind: z.enum(['sequence', 'reply', 'inbound', 'bounce']),
    status: z.enum(['reserved', 'sent', 'unconfirmed', 'failed', 'received']),
    message_id: z.string(),
    in_reply_to: z.string().nullable(),
    references: z.array(z.string()),
    from: z.string(),
    to: z.array(z.string()),
    subject: z.string(),
    text: z.string().nullable(),
    html: z.string().nullable().openapi({ description: 'Sanitized: no scripts, styles, event handlers or non-web links' }),
    step: z.number().int().nullable(),
    variant: z.number().int().nullable(),
    classification: z.enum(REPLY_CLASSES).nullable().openapi({
      description:
        'Of a received message: interested, not_interested, out_of_office, auto_reply, bounce (a permanent delivery failure), soft_bounce (a temporary one, still being retried) or other (a fixed phrase rule over its first lines); null on sent ones',
    }),
    error: z.string().nullable().openapi({
      description:
        "Of a send that failed or whose outcome is unknown: the server's words (`554 5.7.1 Message rejected`) or what went wrong; null otherwise",
    }),
    sent_at: Timestamp.nullable(),
    received_at: Timestamp.nullable(),
  })
  .openapi('OutreachThreadMessage');

/** The spec shows this read as a free-form object; these are its fields. */
export const Thread = ThreadSummary.extend({
  messages: z.array(ThreadMessage),
  context: z.object({
    sequence: z.object({ id: Uuid, name: z.string(), status: z.string(), stop_on_reply: z.boolean() }).nullable(),
    step: z
      .object({ index: z.number().int(), delay_days: z.number().int(), subject: z.string().nullable(), step_count: z.number().int() })
      .nullable(),
    enrollment: z
      .object({
        id: Uuid,
        status: z.string(),
        next_step: z.number().int(),
        next_send_at: Timestamp.nullable(),
        stopped_at: Timestamp.nullable(),
      })
      .nullable(),
    contact: z
      .object({
        id: Uuid,
        first_name: z.string().nullable(),
        last_name: z.string().nullable(),
        email: z.string().nullable(),
        company: z.string().nullable(),
        title: z.string().nullable(),
      })
      .nullable(),
    mailbox: z.object({ id: Uuid, email_address: z.string(), display_name: z.string().nullable(), status: z.string() }).nullable(),
  }),
}).openapi('OutreachThread');

export const MarkReadBody = z
  .strictObject({ read: z.boolean().default(true).openapi({ description: 'false marks the thread unread again' }) })
  .openapi('OutreachMarkRead');

/**
 * A reply's text is `body` (and its HTML `body_html`), as sequence steps name them; `text` and `html`,
 * the names this route took first, are still read. Exactly one of body and text, at most one of
 * body_html and html.
 */
export const ReplyBody = z
  .strictObject({
    body: z.string().min(1).max(20_000).optional().openapi({ description: 'The reply’s text, as sequence steps name it' }),
    body_html: z.string().max(100_000).nullable().optional().openapi({ description: 'Its HTML; without it the text is sent as HTML too' }),
    text: z.string().min(1).max(20_000).optional().openapi({ description: 'Same as body (the earlier name); send one of the two' }),
    html: z
      .string()
      .max(100_000)
      .nullable()
      .optional()
      .openapi({ description: 'Same as body_html (the earlier name); send at most one of the two' }),
  })
  .refine((b) => (b.body === undefined) !== (b.text === undefined), { message: 'Send exactly one of body or text', path: ['body'] })
  // Two HTML texts (null counts as none) would leave the reply's HTML to a guess.
  .refine((b) => b.body_html == null || b.html == null, {
    message: 'Send at most one of body_html or html',
    path: ['body_html'],
  })
  .openapi('OutreachReply', {
    description: 'Exactly one of `body` or `text` (the same field under its earlier name), and at most one of `body_html` or `html`',
    ...refusing(givesNone(['body', 'text']), givesSeveral(['body', 'text']), {
      properties: { body_html: { type: 'string' }, html: { type: 'string' } },
      required: ['body_html', 'html'],
    }),
  });

/** The reply's text and HTML, whichever names they came under. */
export const replyContent = (b: z.output<typeof ReplyBody>) => ({ text: (b.body ?? b.text)!, html: b.body_html ?? b.html ?? null });

export const InboundHeaders = z.object({
  'webhook-id': z.string().optional().openapi({ description: 'Message id of the delivery' }),
  'webhook-timestamp': z.string().optional().openapi({ description: 'Unix seconds; refused beyond five minutes' }),
  'webhook-signature': z.string().optional().openapi({ description: '`v1,<base64 HMAC-SHA256>` entries over `<id>.<timestamp>.<body>`' }),
});

export const InboundBody = z.string().openapi({
  description: 'The received message as RFC 822 text (headers, blank line, body), as the mail server got it',
  format: 'binary',
});

export const InboundAnswer = z
  .object({
    matched: z.boolean(),
    thread_id: Uuid.nullable(),
    kind: z.enum(['reply', 'auto_reply', 'bounce', 'soft_bounce']).nullable().openapi({
      description:
        'bounce: a permanent delivery failure (the enrollment stops, the address is suppressed); soft_bounce: a temporary one (recorded, the sequence goes on); null when nothing matched or a report tells of a delivery',
    }),
    stored: z.boolean(),
  })
  .openapi('OutreachInboundAnswer');
