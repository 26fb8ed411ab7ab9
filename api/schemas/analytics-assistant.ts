import { z } from 'zod';
import { MAX_SQL_LENGTH } from '../../services/assistants/guard';
import { CreatedCursor } from '../../services/pagination';
import { CursorPagination } from '../pagination';
import { Timestamp, Uuid, cappedLimit } from './common';

export const QueryBody = z
  .object({
    sql: z
      .string()
      .min(1)
      .max(MAX_SQL_LENGTH)
      .openapi({
        description:
          'One SELECT over the relations GET /analytics-assistant/schema lists (unqualified names are analytics views). ' +
          'Refused, naming the broken rule: several statements, anything but SELECT, INTO, FOR UPDATE/SHARE, data-modifying WITH, ' +
          'other relations, functions or casts outside the allowlist',
        example: 'SELECT stage, count(*) FROM deals GROUP BY stage',
      }),
  })
  .strict()
  .openapi('AnalyticsQuery');

export const QueryColumn = z.object({
  name: z.string(),
  type: z.string().openapi({ description: 'Postgres type, e.g. bigint, text, timestamp with time zone' }),
});

export const QueryResult = z
  .object({
    columns: z.array(QueryColumn),
    rows: z
      .array(z.array(z.unknown()))
      .openapi({ description: 'One array of values per row, in column order; timestamps as ISO 8601, int8 and numeric as text' }),
    row_count: z.int().min(0),
    truncated: z.boolean().openapi({ description: 'True when rows past ANALYTICS_MAX_ROWS or ANALYTICS_MAX_RESULT_BYTES were left out' }),
  })
  .openapi('AnalyticsQueryResult');

export const SchemaColumn = z.object({ name: z.string(), type: z.string(), description: z.string().nullable() });
export const SchemaRelation = z.object({
  name: z.string().openapi({ description: 'What to write in FROM, e.g. analytics.deals or custom_data_<org>.<table>' }),
  kind: z.enum(['crm', 'custom_data']),
  description: z.string().nullable(),
  columns: z.array(SchemaColumn),
});
export const AnalyticsSchema = z.object({ relations: z.array(SchemaRelation) }).openapi('AnalyticsSchema');

// --- The assistant loop ----------------------------------------------------------------------------------

export const QuestionBody = z
  .object({
    question: z
      .string()
      .trim()
      .min(1)
      .max(2000)
      .openapi({ description: 'The question in plain words', example: 'How many deals did we win per month this year?' }),
    conversation_id: Uuid.optional().openapi({
      description: 'A conversation of the caller to continue (404 otherwise); without it a new one starts',
    }),
  })
  .strict()
  .openapi('AnalyticsQuestion');

export const ConversationParams = z.object({ conversation_id: Uuid });
export const ConversationListQuery = z.object({
  limit: cappedLimit(20, 100),
  cursor: z
    .string()
    .regex(CreatedCursor.pattern)
    .optional()
    .openapi({ description: `next_cursor of the previous page: ${CreatedCursor.description}` }),
});

const Conversation = z
  .object({ id: Uuid, title: z.string(), active_turn_id: Uuid.nullable(), created_at: Timestamp, updated_at: Timestamp })
  .openapi('AnalyticsConversation');
export const ConversationList = z
  .object({ data: z.array(Conversation), pagination: CursorPagination })
  .openapi('AnalyticsConversationList');

const AnswerPart = z
  .looseObject({
    type: z.string().openapi({
      description:
        'step-start, text, data-sql ({attempt, sql}), data-result ({attempt, columns, rows, row_count, truncated}) or data-error ({attempt, error})',
    }),
    id: z.string().optional(),
    text: z.string().optional(),
    state: z.string().optional(),
    data: z.unknown().optional(),
  })
  .openapi('AnalyticsAnswerPart');

const Turn = z.object({
  id: Uuid,
  question: z.string(),
  status: z.enum(['running', 'completed', 'failed']),
  answer: z
    .object({ id: z.string(), role: z.literal('assistant'), parts: z.array(AnswerPart) })
    .openapi({ description: 'The answer as an AI SDK UIMessage' }),
  answer_text: z.string().nullable(),
  model: z.string().nullable().openapi({ description: 'Which model answered' }),
  error: z.string().nullable(),
  created_at: Timestamp,
  ended_at: Timestamp.nullable(),
});
export const ConversationDetail = Conversation.extend({ last_event_id: z.int().min(0), turns: z.array(Turn) }).openapi(
  'AnalyticsConversationDetail',
);

export const ANALYTICS_SSE_DESCRIPTION =
  'AI SDK UI message stream protocol v1 (header `x-vercel-ai-ui-message-stream: v1`), as the AI chat: `id: <n>` + `data: <frame JSON>` ' +
  '(start, start-step, text-*, data-sql, data-result, data-error, finish-step, finish, error), ending with `data: [DONE]`. ' +
  'The conversation id is in the X-Conversation-Id header.';
