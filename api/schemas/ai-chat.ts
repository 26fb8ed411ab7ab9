import { z } from 'zod';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Timestamp, Uuid, cappedLimit } from './common';

export const ChatParams = z.object({ chat_id: Uuid });
export const ApprovalParams = z.object({ chat_id: Uuid, approval_id: Uuid });

export const CreateChatBody = z
  .object({
    title: z.string().trim().min(1).max(200).optional().describe('default: the first message, shortened'),
    account_id: Uuid.nullable().optional().describe('an account of the organization the chat is about (404 otherwise)'),
  })
  .strict()
  .openapi('AiChatCreate');

export const Chat = z
  .object({
    id: Uuid,
    title: z.string(),
    account_id: Uuid.nullable(),
    active_turn_id: Uuid.nullable().describe('the turn streaming or waiting for an approval; null when the chat is idle'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('AiChat');

export const ChatListQuery = z.object({
  limit: cappedLimit(20, 100),
  cursor: cursorQuery(CreatedCursor),
});
export const ChatList = z.object({ data: z.array(Chat), pagination: CursorPagination }).openapi('AiChatList');

/** A part of an AI SDK UIMessage: text, step-start, or a tool part (`tool-<name>`) with its state. */
const UiPart = z
  .looseObject({
    type: z.string().describe('text, step-start, or tool-<name>'),
    text: z.string().optional(),
    state: z
      .string()
      .optional()
      .describe('text: streaming|done; tools: input-available|approval-requested|output-available|output-error|output-denied'),
    toolCallId: z.string().optional(),
    input: z.unknown().optional(),
    output: z.unknown().optional(),
    errorText: z.string().optional(),
    approval: z.object({ id: z.string() }).optional(),
  })
  .openapi('AiChatMessagePart');

export const UiMessage = z
  .object({ id: z.string(), role: z.enum(['user', 'assistant', 'system']), parts: z.array(UiPart), metadata: z.unknown().optional() })
  .openapi('AiChatMessage');

const Approval = z
  .object({
    id: Uuid,
    turn_id: Uuid,
    tool_call_id: z.string(),
    tool_name: z.string(),
    input: z.unknown(),
    input_hash: z.string().describe('SHA-256 of the tool and its input, as stored when proposed'),
    status: z.enum(['pending', 'approved', 'denied', 'expired', 'canceled']),
    reason: z.string().nullable(),
    decided_at: Timestamp.nullable(),
    committed_at: Timestamp.nullable(),
    result: z.unknown().describe('what the approved change wrote (null until committed)'),
    expires_at: Timestamp,
    created_at: Timestamp,
  })
  .openapi('AiChatApproval');

export const ChatDetail = Chat.extend({
  messages: z.array(UiMessage).describe('oldest first; an answer still streaming shows what was sent so far'),
  approvals: z.array(Approval),
  last_event_id: z.number().int().describe('id of the last frame of the chat stream'),
}).openapi('AiChatDetail');

/** The user's new message: text parts only. Tool parts, approvals or history are not accepted from a client. */
const TextPart = z
  .object({
    type: z.literal('text'),
    text: z.string().min(1).max(32_000),
    state: z.enum(['streaming', 'done']).optional(),
    providerMetadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const SendMessageBody = z
  .object({
    message: z
      .object({
        id: z.string().min(1).max(200).describe("the client's id of the message (useChat's); unique in the chat (409 when reused)"),
        role: z.literal('user'),
        parts: z.array(TextPart).min(1).max(20),
        metadata: z.record(z.string(), z.unknown()).optional(),
      })
      .strict()
      .describe('the new user message only: the history is the server’s'),
  })
  .strict()
  .openapi('AiChatSendMessage');

export const ApprovalAnswer = z
  .object({ approved: z.boolean(), reason: z.string().max(1000).optional() })
  .strict()
  .openapi('AiChatApprovalAnswer');

export const StopResult = z.object({ turn_id: Uuid, stopping: z.literal(true) }).openapi('AiChatStop');

export const StreamHeaders = z.object({
  'last-event-id': z
    .string()
    .regex(/^\d{1,15}$/, 'must be a frame id (digits)')
    .optional()
    .describe('the id of the last frame the client received; frames after it are replayed'),
});

/** One server-sent event of a chat stream, as an SSE reader parses it. */
export const UiStreamEvent = z
  .object({
    id: z.string().regex(/^\d+$/).optional().describe('the frame id: send it back as Last-Event-ID to resume after it'),
    event: z.string().optional().describe('always the default, message'),
    data: z.string().describe('a frame of the UI message stream protocol as JSON (`{"type": …}`), or `[DONE]` at the end'),
    retry: z.number().int().optional(),
  })
  .openapi('AiChatStreamEvent');

type StreamHeader = { description: string; schema: { type: 'string'; format?: string } };
/**
 * The 200 of a route that streams UI message stream events (the AI chat and the analytics assistant):
 * the protocol's version header, then `headers`.
 */
export const uiStreamResponse = <H extends Record<string, StreamHeader>>(description: string, headers: H) =>
  ({
    description,
    schema: UiStreamEvent,
    contentType: 'text/event-stream',
    headers: { 'x-vercel-ai-ui-message-stream': { description: 'v1', schema: { type: 'string' as const } }, ...headers },
  }) as const;

export const SSE_DESCRIPTION =
  'AI SDK UI message stream protocol v1 (header `x-vercel-ai-ui-message-stream: v1`): server-sent events `id: <n>` + ' +
  '`data: <frame JSON>` (types start, start-step, text-start, text-delta, text-end, tool-input-available, ' +
  'tool-output-available, tool-output-error, tool-approval-request, tool-output-denied, finish-step, finish, error), ' +
  'ending with `data: [DONE]`; `: keep-alive` comments every AI_CHAT_KEEPALIVE_MS. Not compressed. `finish` carries ' +
  '`finishReason`: `length` when the answer stopped at the model’s token limit (announced by a transient ' +
  '`data-finish-reason` frame, no part of the message), `tool-calls` (waiting for an approval), `error`, `other` (stopped) or `stop`.';
