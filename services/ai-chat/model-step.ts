import * as db from '../../db/ai-chat';
import { getStream } from '../../db/ui-streams';
import { type TranscriptMessage, toolDefinitions } from '../../domain/ai-chat';
import type { UiFrame } from '../../domain/ui-message-stream';
import type { ChatModel } from '../../platform/adapters/llm/chat-model';
import { createEmbedder } from '../../platform/adapters/embedders/embedder';
import type { ServiceDeps } from '../deps';
import { beginModelStep, relayModelStream, type StreamedStep } from '../ui-stream/steps';
import { FrameWriter } from '../ui-stream/writer';
import { modelMessages } from './context';
import { INTENT_MODEL, intentStep } from './intent-step';
import { userText } from './turns';

export interface StepInput {
  orgId: string;
  chatId: string;
  turnId: string;
  step: number;
  transcript: TranscriptMessage[];
  /** The turn's last allowed step: the model gets no tools, so it answers in text. */
  final?: boolean;
}

export type StepResult = StreamedStep;

/** What the running activity gives a step: its attempt, a heartbeat, and the signal of its cancellation. */
export interface RunContext {
  attempt: number;
  heartbeat: () => void;
  signal: AbortSignal;
}

const tag = (turnId: string) => turnId.slice(-8);
const STOP_POLL_MS = 500;

/**
 * One model call of a turn, streamed to the chat's stream as it comes: `start` (first step of a
 * segment), `start-step`, the text as `text-*` frames, then each tool call as `tool-input-available`,
 * written together with the step's result, so a retry returns that result instead of calling again.
 * A retry after a cut-off attempt (a killed worker) closes the text that attempt left open, leaves its
 * frames out of the stored message, and calls the model again.
 */
export async function runModelStep(
  deps: Pick<ServiceDeps, 'sql' | 'logger' | 'config'>,
  model: ChatModel,
  input: StepInput,
  run: RunContext,
): Promise<StepResult> {
  const { orgId, chatId, turnId, step } = input;
  const done = await db.getStepResult<StepResult>(deps.sql, orgId, turnId, step, 'model');
  if (done) return done;
  const [turn, chat, stream] = await Promise.all([
    db.getTurn(deps.sql, orgId, turnId),
    db.chatById(deps.sql, orgId, chatId),
    getStream(deps.sql, orgId, chatId),
  ]);
  if (!turn || turn.ended_at || !chat || !stream) return { text: '', toolCalls: [], finishReason: 'other' };

  const source = `${turnId}:${step}:model`;
  const start: UiFrame | null = stream.segment_open ? null : { type: 'start', messageId: turn.assistant_message_id };
  const { cutOff } = await beginModelStep(deps.sql, orgId, chatId, { model: source, opening: `${turnId}:${step}:start` }, start);
  if (cutOff) deps.logger.info({ orgId, chatId, turnId, step, attempt: run.attempt }, 'model step redone after a cut-off attempt');

  const writer = new FrameWriter(deps.sql, orgId, chatId, source);
  const builtin = !deps.config.LLM_BASE_URL;
  const messages = await modelMessages(deps.sql, chat, turn, input.transcript);
  const textId = `text-${step}-${run.attempt}-${tag(turnId)}`;
  const streamed: StreamedStep = { text: '', toolCalls: [], finishReason: 'stop' };
  // A stop reaches the call through Postgres within STOP_POLL_MS (a cancellation through Temporal waits for a heartbeat to go out).
  const stop = new AbortController();
  const signal = AbortSignal.any([run.signal, stop.signal]);
  const beat = setInterval(() => {
    run.heartbeat();
    db.stopRequested(deps.sql, orgId, turnId).then(
      (stopped) => stopped && stop.abort(),
      () => {},
    );
  }, STOP_POLL_MS);
  try {
    // Without a capable model configured, the service's own understanding answers (a small local model cannot pick tools).
    const events = builtin
      ? intentStep(deps, {
          orgId,
          message: userText(turn.user_message),
          step,
          transcript: input.transcript,
          embedder: createEmbedder(deps.config),
        })
      : model.stream({ messages, tools: input.final ? [] : toolDefinitions(), signal, temperature: 0.2 });
    const ids = { textId, callId: (n: number) => `call-${step}-${n}-${tag(turnId)}` };
    await relayModelStream(events, writer, ids, streamed, run.heartbeat);
  } catch (error) {
    clearInterval(beat);
    if (!stop.signal.aborted || run.signal.aborted) {
      // Failed or canceled mid-answer: what was streamed stays, closed (the turn's end writes the rest).
      await writer.finish(streamed.text ? [{ type: 'text-end', id: textId }] : [], async () => {}).catch(() => {});
      throw error;
    }
    // Stopped: the answer so far is the step's result, without its tool calls.
    streamed.toolCalls = [];
    streamed.finishReason = 'stopped';
  }
  clearInterval(beat);
  const result: StepResult = streamed;
  const last: UiFrame[] = [
    ...(result.text ? [{ type: 'text-end' as const, id: textId }] : []),
    ...result.toolCalls.map((c): UiFrame => ({ type: 'tool-input-available', toolCallId: c.id, toolName: c.name, input: c.input })),
  ];
  await writer.finish(last, async (tx) => {
    await db.insertStepResult(tx, orgId, turnId, step, 'model', result);
    if (step === 0) await db.setTurnModel(tx, orgId, turnId, builtin ? INTENT_MODEL : model.name);
  });
  return result;
}
