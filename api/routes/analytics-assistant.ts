import * as questions from '../../services/analytics-assistant/questions';
import * as runner from '../../services/assistants/query-runner';
import * as schema from '../../services/assistants/schema';
import { UI_MESSAGE_STREAM_CONTENT_TYPE, UI_MESSAGE_STREAM_HEADERS } from '../../platform/core/ui-message-stream';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import {
  ANALYTICS_SSE_DESCRIPTION,
  AnalyticsSchema,
  ConversationDetail,
  ConversationList,
  ConversationListQuery,
  ConversationParams,
  QueryBody,
  QueryResult,
  QuestionBody,
} from '../schemas/analytics-assistant';
import { uiStreamResponse } from '../schemas/ai-chat';
import { ErrorBody, authErrors, validationError } from '../schemas/common';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const tag = 'Analytics Assistant' as const;
const conversationNotFound = {
  404: { description: 'Conversation not found (another user’s or another organization’s included)', schema: ErrorBody },
} as const;

export function registerAnalyticsAssistantRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/assistants/schema',
    tag,
    summary: "The relations and columns the caller's queries may read: the CRM views and the organization's custom-data views",
    auth: { scope: 'dataAccess' },
    responses: { 200: { description: 'Readable relations with their columns and descriptions', schema: AnalyticsSchema }, ...authErrors },
    handler: async ({ auth }) => reply(200, { relations: await schema.readableSchema(deps, orgOf(auth)) }),
  });

  routes.add({
    method: 'post',
    path: '/analytics-assistant/query',
    tag,
    summary:
      "Run one read-only SELECT over the organization's own rows (parser guard, then a least-privilege role in a READ ONLY transaction)",
    auth: { scope: 'dataAccess' },
    body: QueryBody,
    responses: {
      200: { description: 'The result, at most ANALYTICS_MAX_ROWS rows and ANALYTICS_MAX_RESULT_BYTES', schema: QueryResult },
      400: {
        description: 'Refused by a guard rule (named), a database error the statement caused, or past ANALYTICS_STATEMENT_TIMEOUT_MS',
        schema: ErrorBody,
      },
      502: { description: 'The analytics database role could not connect, or the database failed', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await runner.runQuery(deps, orgOf(auth), body.sql)),
  });

  routes.add({
    method: 'post',
    path: '/analytics-assistant/questions',
    tag,
    summary:
      'Ask a question in plain words: the model writes SQL (run_sql), each attempt runs as in /query, then it answers (a Temporal workflow, analytics-assistant:<conversation_id>)',
    auth: { scope: 'dataAccess' },
    body: QuestionBody,
    responses: {
      // The same event shape as the AI chat's stream: one protocol, one schema.
      200: uiStreamResponse(`The turn, streamed. ${ANALYTICS_SSE_DESCRIPTION}`, {
        'X-Conversation-Id': {
          description: 'The conversation the question belongs to',
          schema: { type: 'string' as const, format: 'uuid' },
        },
      }),
      ...conversationNotFound,
      409: { description: 'A question is already being answered in this conversation', schema: ErrorBody },
      503: { description: 'Workflow engine unavailable: nothing was recorded', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => {
      const asked = await questions.ask(deps, orgOf(auth), auth.userId, body);
      return reply(
        200,
        asked.stream,
        { ...UI_MESSAGE_STREAM_HEADERS, 'X-Conversation-Id': asked.conversationId },
        UI_MESSAGE_STREAM_CONTENT_TYPE,
      );
    },
  });

  routes.add({
    method: 'get',
    path: '/analytics-assistant/conversations',
    tag,
    summary: "The caller's conversations, newest first (cursor list)",
    auth: { scope: 'dataAccess' },
    query: ConversationListQuery,
    responses: { 200: { description: 'A page of conversations', schema: ConversationList }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => reply(200, await questions.listConversations(deps, orgOf(auth), auth.userId, query)),
  });

  routes.add({
    method: 'get',
    path: '/analytics-assistant/conversations/{conversation_id}',
    tag,
    summary: 'One conversation with its questions and answers (the SQL tried, results, errors and text, as AI SDK UIMessage parts)',
    auth: { scope: 'dataAccess' },
    params: ConversationParams,
    responses: {
      200: { description: 'The conversation', schema: ConversationDetail },
      ...conversationNotFound,
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, auth }) =>
      reply(200, await questions.getConversation(deps, orgOf(auth), auth.userId, params.conversation_id)),
  });
}
