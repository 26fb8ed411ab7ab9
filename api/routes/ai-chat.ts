import { z } from 'zod';
import * as approvals from '../../services/ai-chat/approvals';
import * as chats from '../../services/ai-chat/chats';
import { AI_CHAT_PAGE } from '../pages/ai-chat';
import * as stream from '../../services/ai-chat/stream';
import * as turns from '../../services/ai-chat/turns';
import { UI_MESSAGE_STREAM_CONTENT_TYPE, UI_MESSAGE_STREAM_HEADERS } from '../../platform/core/ui-message-stream';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, validationError } from '../schemas/common';
import {
  ApprovalAnswer,
  ApprovalParams,
  Chat,
  ChatDetail,
  ChatList,
  ChatListQuery,
  ChatParams,
  CreateChatBody,
  SSE_DESCRIPTION,
  SendMessageBody,
  StopResult,
  StreamHeaders,
  uiStreamResponse,
} from '../schemas/ai-chat';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const tag = 'AI' as const;
const chatNotFound = {
  404: { description: 'Chat not found (another user’s or another organization’s chat included)', schema: ErrorBody },
} as const;
const unavailable = { 503: { description: 'Workflow engine unavailable: nothing was recorded', schema: ErrorBody } } as const;
const sse = (description: string) =>
  uiStreamResponse(`${description}. ${SSE_DESCRIPTION}`, {
    'Cache-Control': { description: 'no-cache, no-transform', schema: { type: 'string' as const } },
  });
const streamed = (body: unknown) => reply(200, body, UI_MESSAGE_STREAM_HEADERS, UI_MESSAGE_STREAM_CONTENT_TYPE);

export function registerAiChatRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/ai/chats',
    tag,
    summary: 'Start a chat with the CRM assistant (it belongs to the caller and the organization)',
    auth: { scope: 'crmRead' },
    body: CreateChatBody,
    responses: {
      200: { description: 'The new chat', schema: Chat },
      404: { description: 'Account not found', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await chats.createChat(deps, orgOf(auth), auth.userId, body)),
  });

  routes.add({
    method: 'get',
    path: '/ai/chats',
    tag,
    summary: "The caller's chats, newest first (cursor list)",
    auth: { scope: 'crmRead' },
    query: ChatListQuery,
    responses: {
      200: { description: 'A page of chats', schema: ChatList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => chats.listChats(deps, orgOf(auth), auth.userId, query),
  });

  routes.add({
    method: 'get',
    path: '/ai/chats/{chat_id}',
    tag,
    summary: 'One chat with its messages as AI SDK UIMessages ({id, role, parts}) and its approvals',
    auth: { scope: 'crmRead' },
    params: ChatParams,
    responses: { 200: { description: 'The chat', schema: ChatDetail }, ...chatNotFound, ...authErrors, ...validationError },
    handler: async ({ params, auth }) => chats.getChat(deps, orgOf(auth), auth.userId, params.chat_id),
  });

  routes.add({
    method: 'delete',
    path: '/ai/chats/{chat_id}',
    tag,
    summary: 'Delete a chat with its messages and approvals; a running turn is terminated',
    auth: { scope: 'crmRead' },
    params: ChatParams,
    responses: { 204: { description: 'Deleted' }, ...chatNotFound, ...authErrors, ...validationError, ...unavailable },
    handler: async ({ params, auth }) => {
      await chats.deleteChat(deps, orgOf(auth), auth.userId, params.chat_id);
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/ai/chats/{chat_id}/messages',
    tag,
    summary: "Send the user's new message; the answer streams as the turn runs (a Temporal workflow, ai-chat:<chat_id>)",
    auth: { scope: 'crmRead' },
    params: ChatParams,
    body: SendMessageBody,
    responses: {
      200: sse('The turn, from its start to its end or to an approval request'),
      ...chatNotFound,
      409: { description: 'A turn is already active in the chat, or the message id was used before', schema: ErrorBody },
      ...authErrors,
      ...validationError,
      ...unavailable,
    },
    handler: async ({ params, body, auth }) =>
      streamed(await turns.sendMessage(deps, orgOf(auth), auth.userId, params.chat_id, body.message)),
  });

  routes.add({
    method: 'get',
    path: '/ai/chats/{chat_id}/stream',
    tag,
    summary: "Resume the active turn's stream after Last-Event-ID, or replay its latest segment from the start without it",
    description:
      'Frames after Last-Event-ID up to the end of the active turn’s latest segment, then live. A client that sends no ' +
      'Last-Event-ID has seen nothing: it gets that segment from its `start`, also once the segment has closed (the turn ' +
      'waits for an approval: the segment ends with the approval request and `finish`).',
    auth: { scope: 'crmRead' },
    params: ChatParams,
    headers: StreamHeaders,
    responses: {
      200: sse('The active turn’s latest segment: after Last-Event-ID, or from its start without it'),
      204: {
        description:
          'No turn is active; or the turn waits for an approval and Last-Event-ID shows the client already has its whole segment',
      },
      ...chatNotFound,
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, auth, ctx }) => {
      const last = ctx.get('last-event-id');
      const body = await stream.resumeStream(deps, orgOf(auth), auth.userId, params.chat_id, last ? Number(last) : null);
      return body ? streamed(body) : reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/ai/chats/{chat_id}/stop',
    tag,
    summary: 'End the active turn (a client that disconnects does not end it)',
    auth: { scope: 'crmRead' },
    params: ChatParams,
    responses: {
      202: { description: 'The turn is ending; its stream closes with `finish`', schema: StopResult },
      ...chatNotFound,
      409: { description: 'No turn is active', schema: ErrorBody },
      ...authErrors,
      ...validationError,
      ...unavailable,
    },
    handler: async ({ params, auth }) => reply(202, await turns.stopTurn(deps, orgOf(auth), auth.userId, params.chat_id)),
  });

  routes.add({
    method: 'post',
    path: '/ai/chats/{chat_id}/approvals/{approval_id}',
    tag,
    summary: 'Approve or deny a change the assistant proposed; the turn resumes as a new stream',
    auth: { scope: 'crmManage' },
    params: ApprovalParams,
    body: ApprovalAnswer,
    responses: {
      200: sse('The resumed turn: tool-output-available (approved; committed once) or tool-output-denied, then the model’s follow-up'),
      404: { description: 'Chat or approval not found (another organization’s included)', schema: ErrorBody },
      409: { description: 'Already answered (single use), expired, or its turn has ended', schema: ErrorBody },
      ...authErrors,
      ...validationError,
      ...unavailable,
    },
    handler: async ({ params, body, auth }) =>
      streamed(await approvals.answerApproval(deps, orgOf(auth), auth.userId, params.chat_id, params.approval_id, body)),
  });

  routes.add({
    method: 'get',
    path: '/ai/chat',
    tag,
    summary: 'The chat page: paste a key, pick or start a chat, watch answers stream, approve or deny changes',
    auth: 'public',
    responses: { 200: { description: 'HTML page (no outside resources)', schema: z.string(), contentType: 'text/html' } },
    handler: async () =>
      reply(
        200,
        AI_CHAT_PAGE.html,
        { 'Content-Security-Policy': AI_CHAT_PAGE.csp, 'Cache-Control': 'no-cache' },
        'text/html; charset=utf-8',
      ),
  });
}
