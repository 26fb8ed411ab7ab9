import * as db from '../../db/ai-chat';
import { getStream } from '../../db/ui-streams';
import { type TranscriptMessage, toolDefinitions } from '../../domain/ai-chat';
import type { UiFrame } from '../../domain/ui-message-stream';
import type { ChatModel } from '../../platform/adapters/llm/chat-model';
import { createEmbedder } from '../../platform/adapters/embedders/embedder';
import { BUILTIN_MODEL, type RunContext, runKernelStep } from '../assistants/turn-kernel';
import type { ServiceDeps } from '../deps';
import type { StreamedStep } from '../ui-stream/steps';
import { modelMessages } from './context';
import { intentStep } from './intent-step';
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
export type { RunContext };

/**
 * One model call of a chat turn, the chat's policy over the assistants' turn kernel: the chat's
 * transcript and tools (none on the final step), its stop flag, its tool calls as `tool-input-available`
 * frames, and the step's result stored with its last frames, so a retried activity returns it rather
 * than calling the model again. Without `LLM_BASE_URL` the service's own understanding answers.
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
  const builtin = !deps.config.LLM_BASE_URL;
  const messages = await modelMessages(deps.sql, chat, turn, input.transcript);
  const { result, cutOff } = await runKernelStep(
    deps,
    {
      orgId,
      streamId: chatId,
      turnId,
      step,
      messageId: turn.assistant_message_id,
      // Without a capable model configured, the service's own understanding answers (a small local model cannot pick tools).
      events: (signal) =>
        builtin
          ? intentStep(deps, {
              orgId,
              message: userText(turn.user_message),
              step,
              transcript: input.transcript,
              embedder: createEmbedder(deps.config),
            })
          : model.stream({ messages, tools: input.final ? [] : toolDefinitions(), signal, temperature: 0.2 }),
      stopRequested: () => db.stopRequested(deps.sql, orgId, turnId),
      closing: (r) =>
        r.toolCalls.map((c): UiFrame => ({ type: 'tool-input-available', toolCallId: c.id, toolName: c.name, input: c.input })),
      store: async (tx, r) => {
        await db.insertStepResult(tx, orgId, turnId, step, 'model', r);
        if (step === 0) await db.setTurnModel(tx, orgId, turnId, builtin ? BUILTIN_MODEL : model.name);
      },
    },
    run,
  );
  if (cutOff) deps.logger.info({ orgId, chatId, turnId, step, attempt: run.attempt }, 'model step redone after a cut-off attempt');
  return result;
}
