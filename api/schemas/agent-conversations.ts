import { z } from 'zod';
import { CreatedCursor, CursorPagination, cursorQuery } from '../pagination';
import { Uuid } from './common';

// An agent's conversations (the voice runtime's records): list, one with its turns, its recording.

export const ConversationParams = z.object({ id: Uuid, conversation_id: Uuid });

export const ConversationListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: cursorQuery(CreatedCursor),
});

export const Conversation = z
  .object({
    id: Uuid,
    agent_id: Uuid.nullable(),
    agent_version: z.number().int().nullable(),
    campaign_id: Uuid.nullable(),
    contact_id: Uuid.nullable(),
    channel: z.enum(['twilio', 'widget', 'sip', 'vapi', 'simulated']).nullable(),
    direction: z.enum(['inbound', 'outbound']).nullable(),
    phone_number: z.string().nullable(),
    status: z
      .string()
      .openapi({ description: '`in_progress`, `completed`, `transferred`, `voicemail`, `no_input`, `failed`, or a campaign call status' }),
    end_reason: z.string().nullable(),
    started_at: z.string().nullable(),
    ended_at: z.string().nullable(),
    duration_seconds: z.number().int().nullable(),
    summary: z.string().nullable(),
    outcome: z.record(z.string(), z.unknown()),
    has_recording: z.boolean(),
    recording_channels: z.enum(['mono', 'dual']).nullable(),
    recording_expires_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('Conversation');

export const ConversationTurn = z
  .object({
    seq: z.number().int(),
    role: z.enum(['agent', 'caller', 'tool', 'system']),
    text: z.string(),
    heard_text: z.string().nullable().openapi({ description: 'an agent turn cut by the caller: the part the caller heard' }),
    interrupted: z.boolean(),
    started_ms: z.number().int().nullable(),
    ended_ms: z.number().int().nullable(),
    audit: z
      .record(z.string(), z.unknown())
      .openapi({ description: 'stage timings (ms), the text heard, tool inputs and outputs, the version' }),
    created_at: z.string(),
  })
  .openapi('ConversationTurn');

export const ConversationDetail = Conversation.extend({ turns: z.array(ConversationTurn) }).openapi('ConversationDetail');

export const ConversationList = z.object({ data: z.array(Conversation), pagination: CursorPagination }).openapi('ConversationList');
