import { z } from 'zod';
import { CreatedCursor, cursorQuery } from '../pagination';
import { FEEDBACK_CATEGORIES, FEEDBACK_CONTEXT_MAX_BYTES, FEEDBACK_MESSAGE_MAX, FEEDBACK_STATUSES } from '../../domain/feedback';
import { Timestamp, Uuid, cappedLimit } from './common';

export const FeedbackBody = z
  .strictObject({
    message: z.string().trim().min(1).max(FEEDBACK_MESSAGE_MAX),
    category: z.enum(FEEDBACK_CATEGORIES),
    rating: z.number().int().min(1).max(5).optional(),
    context: z
      .record(z.string(), z.unknown())
      .refine((v) => JSON.stringify(v).length <= FEEDBACK_CONTEXT_MAX_BYTES, `at most ${FEEDBACK_CONTEXT_MAX_BYTES} bytes of JSON`)
      .optional()
      .openapi({ description: `Free-form context (page, app version...), at most ${FEEDBACK_CONTEXT_MAX_BYTES} bytes of JSON` }),
    email: z
      .email()
      .max(320)
      .optional()
      .describe('where an answer may go; without it, the address the identity provider gives for the user (if any)'),
  })
  .openapi('SubmitFeedback');

export const FeedbackReceipt = z.object({ id: Uuid, created_at: Timestamp }).openapi('FeedbackReceipt');

export const FeedbackItem = z
  .object({
    id: Uuid,
    user: z.string().openapi({ description: 'user:<id> of the author' }),
    submitter_email: z.string().nullable().describe("the author's address when the feedback was sent, or null when none was known"),
    organization_id: Uuid.nullable(),
    organization_external_id: z.string().nullable(),
    category: z.enum(FEEDBACK_CATEGORIES),
    message: z.string(),
    rating: z.number().int().nullable(),
    context: z.record(z.string(), z.unknown()),
    status: z.enum(FEEDBACK_STATUSES).describe("operators' triage: new, seen or done"),
    status_changed_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .openapi('Feedback');
export const FeedbackList = z.object({ data: z.array(FeedbackItem), next_cursor: z.string().nullable() }).openapi('FeedbackList');
export const OwnFeedbackQuery = z.object({
  category: z.enum(FEEDBACK_CATEGORIES).optional(),
  status: z.enum(FEEDBACK_STATUSES).optional(),
  limit: cappedLimit(50, 200),
  cursor: cursorQuery(CreatedCursor),
});
export const FeedbackParams = z.object({ feedback_id: Uuid });
export const FeedbackStatusBody = z.strictObject({ status: z.enum(FEEDBACK_STATUSES) }).openapi('FeedbackStatusUpdate');
export const FeedbackQuery = z.object({
  category: z.enum(FEEDBACK_CATEGORIES).optional(),
  status: z.enum(FEEDBACK_STATUSES).optional(),
  organization_id: Uuid.optional(),
  limit: cappedLimit(50, 200),
  cursor: cursorQuery(CreatedCursor),
});
