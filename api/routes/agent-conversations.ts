import * as queries from '../../services/conversations/queries';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ConversationDetail, ConversationList, ConversationListQuery, ConversationParams } from '../schemas/agent-conversations';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';

export function registerAgentConversationRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/core/agents/{id}/conversations',
    tag: 'Agents',
    summary: "The agent's conversations, newest first",
    auth: { scope: 'agentsRead' },
    params: IdParams,
    query: ConversationListQuery,
    responses: {
      200: { description: 'A page of conversations', schema: ConversationList },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => queries.listAgentConversations(deps, orgOf(auth), params.id, query),
  });
  routes.add({
    method: 'get',
    path: '/core/agents/{id}/conversations/{conversation_id}',
    tag: 'Agents',
    summary: 'One conversation with its transcript, turn by turn, and each turn’s audit',
    auth: { scope: 'agentsRead' },
    params: ConversationParams,
    responses: {
      200: { description: 'The conversation', schema: ConversationDetail },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => queries.getAgentConversation(deps, orgOf(auth), params.id, params.conversation_id),
  });
  routes.add({
    method: 'get',
    path: '/core/agents/{id}/conversations/{conversation_id}/recording',
    tag: 'Agents',
    summary: "The conversation's recording (WAV): a redirect to a short-lived URL",
    auth: { scope: 'agentsRead' },
    params: ConversationParams,
    responses: {
      302: {
        description: 'To the recording',
        headers: { Location: { description: 'A URL valid for 5 minutes', schema: { type: 'string' } } },
      },
      502: { description: 'The object store failed', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) =>
      reply(302, undefined, { Location: await queries.conversationRecordingUrl(deps, orgOf(auth), params.id, params.conversation_id) }),
  });
}
