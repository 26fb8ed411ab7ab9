import { z } from 'zod';
import { Uuid } from './common';

// Replays: a recorded conversation run again through another version of its agent, turn by turn, and
// batches of them over the agent's last ended conversations.

export const ReplayParams = z.object({ id: Uuid, replay_id: Uuid });
export const ReplayBatchParams = z.object({ id: Uuid, batch_id: Uuid });

const version = z
  .number()
  .int()
  .min(1)
  .max(2_147_483_647)
  .openapi({ description: 'The version to replay through (any, published or not)' });
const callTools = z.boolean().default(false).openapi({
  description:
    "false (default): the version's tool calls are answered from the conversation's recorded results, matched by tool name and arguments, else with an 'unavailable in replay' result; true: they run for real through the replay's workflow (a transfer never is)",
});

export const ReplayCreate = z.strictObject({ version, call_tools: callTools }).openapi('ReplayCreate');
export const ReplayBatchCreate = z
  .strictObject({
    version,
    last: z.number().int().min(1).max(100).openapi({ description: "How many of the agent's last ended conversations to replay" }),
    call_tools: callTools,
  })
  .openapi('ReplayBatchCreate');

const Status = z.enum(['queued', 'running', 'completed', 'failed']);
const Counts = z.object({ turns: z.number().int(), changed: z.number().int() }).openapi('ReplayCounts');
const Tool = z.object({ name: z.string(), input: z.unknown(), ok: z.boolean() });

export const ReplayTurn = z
  .object({
    index: z.number().int(),
    caller: z
      .object({
        seq: z.number().int().openapi({ description: "The recorded caller turn's sequence number" }),
        text: z.string().openapi({ description: 'What the caller was recorded saying' }),
        heard: z.string().openapi({ description: "What the replayed version's recognizer heard" }),
        source: z.enum(['recording', 'synthesized', 'keys']).openapi({
          description:
            "`recording`: the turn's slice of the caller channel of the dual-channel recording; `synthesized`: no such recording, so the recorded text spoken by the engine's voice; `keys`: keys pressed, replayed as text",
        }),
        started_ms: z.number().int().nullable(),
        ended_ms: z.number().int().nullable(),
      })
      .nullable()
      .openapi({ description: 'null for the opening the agent speaks before the caller' }),
    old: z.object({ text: z.string(), tools: z.array(Tool) }),
    new: z.object({
      text: z.string().nullable().openapi({ description: 'null when the replayed version had ended the call before this turn' }),
      tools: z.array(Tool.extend({ source: z.enum(['recorded', 'unavailable', 'called']) })),
      error: z.string().optional(),
    }),
    changed: z.boolean().openapi({ description: 'The old and the new text differ once case, punctuation and spacing are set aside' }),
    timings: z.object({ stt_ms: z.number().nullable(), llm_first_token_ms: z.number().nullable(), turn_ms: z.number() }),
  })
  .openapi('ReplayTurn');

export const Replay = z
  .object({
    id: Uuid,
    agent_id: Uuid,
    conversation_id: Uuid,
    batch_id: Uuid.nullable(),
    version: z.number().int(),
    call_tools: z.boolean(),
    status: Status,
    error: z.string().nullable(),
    counts: Counts.nullable().openapi({ description: 'Once completed' }),
    timings: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({ description: 'Once completed: total_ms, stt_ms, llm_first_token_ms, caller_audio (turns by source), model, recognizer' }),
    turns: z.array(ReplayTurn).openapi({ description: 'Once completed: each turn, the old and the new answer side by side' }),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .openapi('Replay');

export const ReplayBatch = z
  .object({
    id: Uuid,
    agent_id: Uuid,
    version: z.number().int(),
    call_tools: z.boolean(),
    status: Status,
    summary: z.object({
      replays: z.number().int(),
      queued: z.number().int(),
      running: z.number().int(),
      completed: z.number().int(),
      failed: z.number().int(),
      turns: z.number().int(),
      changed: z.number().int(),
      conversations_changed: z.number().int(),
    }),
    replays: z.array(
      z.object({ id: Uuid, conversation_id: Uuid, status: Status, error: z.string().nullable(), counts: Counts.nullable() }),
    ),
    created_at: z.string(),
  })
  .openapi('ReplayBatch');
