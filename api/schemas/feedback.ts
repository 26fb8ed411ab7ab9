import { z } from 'zod';
import { FEEDBACK_CATEGORIES, FEEDBACK_CONTEXT_MAX_BYTES, FEEDBACK_MESSAGE_MAX } from '../../domain/feedback';
import { Timestamp, Uuid, cappedLimit } from './common';

export const FeedbackBody = z
  .strictObject({
    message: z.string().trim().min(1).max(FEEDBACK_MESSAGE_MAX),
    category: z.enum(FEEDBACK_CATEGORIES),
    rating: z.number().int().min(1).max(5).optional(),
    context: z
      .record(z.string().max(100), z.unknown())
      .refine((v) => JSON.stringify(v).length <= FEEDBACK_CONTEXT_MAX_BYTES, `at most ${FEEDBACK_CONTEXT_MAX_BYTES} bytes of JSON`)
      .optional()
      .openapi({ description: `Free-form context (page, app version...), at most ${FEEDBACK_CONTEXT_MAX_BYTES} bytes of JSON` }),
  })
  .openapi('SubmitFeedback');

export const FeedbackReceipt = z.object({ id: Uuid, created_at: Timestamp }).openapi('FeedbackReceipt');

export const FeedbackItem = z
  .object({
    id: Uuid,
    user: z.string().openapi({ description: 'user:<id> of the author' }),
    organization_id: Uuid.nullable(),
    organization_external_id: z.string().nullable(),
    category: z.enum(FEEDBACK_CATEGORIES),
    message: z.string(),
    rating: z.number().int().nullable(),
    context: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
  })
  .openapi('Feedback');
export const FeedbackList = z.object({ data: z.array(FeedbackItem), next_cursor: z.string().nullable() }).openapi('FeedbackList');
export const FeedbackQuery = z.object({
  category: z.enum(FEEDBACK_CATEGORIES).optional(),
  organization_id: Uuid.optional(),
  limit: cappedLimit(50, 200),
  cursor: z.string().max(500).optional(),
});
