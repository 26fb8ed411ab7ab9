import * as conversations from '../../db/analytics-conversations';
import { appendFrames, framesOfSource, getStream } from '../../db/ui-streams';
import { type AssistantTranscript, RUN_SQL_TOOL, toolOutput } from '../../domain/analytics-assistant';
import type { UiFrame } from '../../domain/ui-message-stream';
import type { ChatModel } from '../../platform/adapters/llm/chat-model';
import { createEmbedder } from '../../platform/adapters/embedders/embedder';
import { localPlanCompleter } from '../assistants/plan-completer';
import { localTermChooser } from '../assistants/term-chooser';
import type { ServiceDeps } from '../deps';
import { attemptQuery } from '../assistants/query-runner';
import { readableSchema } from '../assistants/schema';
import { BUILTIN_MODEL, type RunContext, closeTurn, runKernelStep } from '../assistants/turn-kernel';
import { understandQuestion } from '../assistants/understanding';
import { parserStep } from './parser-step';
import { modelMessages, systemPrompt } from './prompt';

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

export interface TurnRef {
  orgId: string;
  conversationId: string;
  turnId: string;
}

export interface StepResult {
  text: string;
  toolCalls: { id: string; name: string; input: unknown }[];
}

export type { RunContext };

const tag = (turnId: string) => turnId.slice(-8);

/**
 * One model call, the Analytics Assistant's policy over the assistants' turn kernel: the schema and the
 * conversation's earlier questions as the model's context, run_sql as its only tool (none on the final
 * step, so the model answers in text), the semantic layer's plan as a hint to a capable model. Without
 * `LLM_BASE_URL` the semantic layer answers (the local model cannot write SQL).
 */
export async function modelStep(
  deps: Deps,
  model: ChatModel,
  input: TurnRef & { step: number; transcript: AssistantTranscript; final: boolean },
  run: RunContext,
): Promise<StepResult> {
  const { orgId, conversationId, turnId, step } = input;
  const turn = await conversations.getTurn(deps.sql, orgId, turnId);
  const stream = await getStream(deps.sql, orgId, conversationId);
  if (!turn || turn.ended_at || !stream) return { text: '', toolCalls: [] };
  const [relations, earlier] = await Promise.all([
    readableSchema(deps, orgId),
    conversations.previousTurns(deps.sql, orgId, conversationId, turnId, 10),
  ]);
  const hint = deps.config.LLM_BASE_URL && step === 0 ? await planHint(deps, orgId, turn.question) : null;
  const messages = modelMessages(
    systemPrompt(relations, new Date().toISOString().slice(0, 10)) + (hint ? `\n${hint}` : ''),
    earlier.map((t) => ({ question: t.question, answer: t.answer_text })),
    turn.question,
    input.transcript,
  );
  const parser = !deps.config.LLM_BASE_URL;
  const tools = input.final ? [] : [{ ...RUN_SQL_TOOL, parameters: RUN_SQL_TOOL.parameters as unknown as Record<string, unknown> }];
  const { result } = await runKernelStep(
    deps,
    {
      orgId,
      streamId: conversationId,
      turnId,
      step,
      messageId: turn.answer_message_id,
      events: (signal, writer) =>
        parser
          ? parserStep(
              deps,
              {
                orgId,
                question: turn.question,
                step,
                transcript: input.transcript,
                embedder: createEmbedder(deps.config),
                chooser: localTermChooser(deps.config),
                completer: localPlanCompleter(deps.config),
              },
              writer,
              `plan-${tag(turnId)}`,
            )
          : model.stream({ messages, tools, signal, temperature: 0 }),
      store: async (tx) => {
        if (step === 0) await conversations.setTurnModel(tx, orgId, turnId, parser ? BUILTIN_MODEL : model.name);
      },
    },
    run,
  );
  return { text: result.text, toolCalls: result.toolCalls };
}

/**
 * One run_sql call: the statement as a `data-sql` part, then its result as `data-result` or its refusal
 * or database error as `data-error`; what goes back to the model is the result marked untrusted, or the
 * error to fix. A retry re-runs the read without writing its parts twice.
 */
export async function runSqlCall(
  deps: Deps,
  input: TurnRef & { step: number; attempt: number; call: { id: string; name: string; input: unknown } },
): Promise<{ message: { role: 'tool'; toolCallId: string; content: string }; ok: boolean }> {
  const { orgId, conversationId, turnId, attempt, call } = input;
  const source = `${turnId}:${input.step}:${call.id}`;
  const write = async (frames: UiFrame[], suffix: string) => {
    const written = (await framesOfSource(deps.sql, orgId, conversationId, `${source}${suffix}`)).length > 0;
    if (!written) await appendFrames(deps.sql, orgId, conversationId, `${source}${suffix}`, frames);
  };
  const id = `${tag(turnId)}-${attempt}`;
  const sql = call.name === RUN_SQL_TOOL.name ? (call.input as { sql?: unknown } | null)?.sql : undefined;
  if (typeof sql !== 'string' || sql.trim() === '') {
    const error = `Unknown tool call ${call.name}: the only tool is run_sql {sql}`;
    await write([{ type: 'data-error', id, data: { attempt, error } }, { type: 'finish-step' }], '');
    return { message: { role: 'tool', toolCallId: call.id, content: toolOutput({ ok: false, error }) }, ok: false };
  }
  await write([{ type: 'data-sql', id, data: { attempt, sql } }], '');
  const outcome = await attemptQuery(deps, orgId, sql);
  if (!outcome.ok) {
    await write([{ type: 'data-error', id, data: { attempt, error: outcome.error.detail } }, { type: 'finish-step' }], ':result');
    return { message: { role: 'tool', toolCallId: call.id, content: toolOutput({ ok: false, error: outcome.error.detail }) }, ok: false };
  }
  await write([{ type: 'data-result', id, data: { attempt, ...outcome.result } }, { type: 'finish-step' }], ':result');
  return { message: { role: 'tool', toolCallId: call.id, content: toolOutput({ ok: true, ...outcome.result }) }, ok: true };
}

/** The turn's end, the Analytics Assistant's record of it: the answer as the client saw it, its text, the transcript; the conversation freed. */
export async function endTurn(
  deps: Pick<ServiceDeps, 'sql'> & { logger?: Pick<ServiceDeps['logger'], 'warn'> },
  input: TurnRef & { error: string | null; transcript: AssistantTranscript },
): Promise<void> {
  const { orgId, conversationId, turnId } = input;
  await closeTurn(
    deps,
    { orgId, streamId: conversationId, error: input.error, finishReason: input.error ? 'error' : 'stop' },
    {
      load: async (tx) => {
        const turn = await conversations.getTurn(tx, orgId, turnId, true);
        return (
          turn && {
            id: turnId,
            messageId: turn.answer_message_id,
            firstFrameId: Number(turn.first_frame_id),
            ended: Boolean(turn.ended_at),
          }
        );
      },
      store: async (tx, parts) => {
        const answers = input.transcript.filter((m) => m.role === 'assistant' && m.content.trim());
        const text = answers.length ? answers[answers.length - 1]!.content : null;
        await conversations.endTurn(tx, orgId, turnId, {
          status: input.error ? 'failed' : 'completed',
          parts,
          text,
          transcript: input.transcript,
          model: null,
          error: input.error,
        });
        await conversations.clearActiveTurn(tx, orgId, conversationId, turnId);
      },
    },
  );
}

/** The parser's reading of the question, given to a capable model as a hint it may use or correct. */
async function planHint(deps: Pick<ServiceDeps, 'sql'>, orgId: string, question: string): Promise<string | null> {
  const understood = await understandQuestion(deps, orgId, question).catch(() => null);
  if (understood?.kind !== 'plan') return null;
  return `A rule-based parser read this question as the plan ${JSON.stringify(understood.plan)}, compiled to: ${understood.compiled.sql.replace(/\s+/g, ' ')}. Use it when it fits the question; correct it when it does not.`;
}
