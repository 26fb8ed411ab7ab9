import type { Readable } from 'node:stream';
import type { Db } from '../../db/client';
import { getStream } from '../../db/ui-streams';
import type { UiFrame } from '../../domain/ui-message-stream';
import type { ChatEvent } from '../../platform/adapters/llm/chat-model';
import type { Workflow } from '@temporalio/common';
import type { WorkflowRef } from '../../workflows/workflow-ref';
import type { ServiceDeps } from '../deps';
import { streamResponse } from '../ui-stream/response';
import { beginModelStep, relayModelStream, type StreamedStep } from '../ui-stream/steps';
import { closeTurnStream, type StreamTurn } from '../ui-stream/turn-end';
import { FrameWriter } from '../ui-stream/writer';
import { type StartOptions, type WorkflowClientDeps, startAfterPreviousRun } from '../workflow-client';

/**
 * The turn kernel both assistants run on: a turn starts after the previous run of its workflow, each
 * model step streams through one frame writer with a heartbeat (and a stop flag polled when the policy
 * has one), a cut-off attempt is closed before the step is redone, and the turn ends by closing its
 * stream segment and storing the answer as the client saw it. The chat and the Analytics Assistant are
 * policies over it: which turn table, which messages and tools, what a step's result stores.
 */

/** The name recorded on turns answered without a large model (the semantic layer and the rules). */
export const BUILTIN_MODEL = 'builtin:semantic-layer';

/** How often a running step beats and polls its stop flag (a Temporal cancellation waits for a heartbeat to go out). */
const BEAT_MS = 500;

/** What the running activity gives a step: its attempt, a heartbeat, and the signal of its cancellation. */
export interface RunContext {
  attempt: number;
  heartbeat: () => void;
  signal: AbortSignal;
}

/**
 * A turn's opening, in the caller's transaction: `record` writes the turn's row from the stream's next
 * frame id, then the turn's workflow starts after the previous run of it (Temporal unreachable: the
 * transaction rolls back). Answers the last frame id before the turn, where its response starts.
 */
export async function openTurn<W extends Workflow>(
  tx: Db,
  deps: WorkflowClientDeps,
  orgId: string,
  streamId: string,
  record: (firstFrameId: number) => Promise<void>,
  workflow: { ref: WorkflowRef<W>; options: StartOptions<W> },
): Promise<number> {
  const stream = await getStream(tx, orgId, streamId);
  const last = Number(stream!.last_frame_id);
  await record(last + 1);
  await startAfterPreviousRun(deps, workflow.ref, orgId, workflow.options);
  return last;
}

/** A turn's stream from `afterId` to the end of the segment being written, with the assistants' keep-alive and idle bound. */
export function turnStream(
  deps: Pick<ServiceDeps, 'sql' | 'logger' | 'config'>,
  orgId: string,
  streamId: string,
  afterId: number,
): Readable {
  return streamResponse(deps, {
    orgId,
    streamId,
    afterId,
    keepAliveMs: deps.config.AI_CHAT_KEEPALIVE_MS,
    idleTimeoutMs: deps.config.AI_CHAT_STREAM_IDLE_TIMEOUT_MS,
  });
}

/** One step as a policy describes it. */
export interface KernelStep {
  orgId: string;
  streamId: string;
  turnId: string;
  step: number;
  /** The answer message's id: a segment opened by this step starts with it. */
  messageId: string;
  /** The model's events (or the built-in understanding's, which speaks like a model and may add data parts through `writer`). */
  events: (signal: AbortSignal, writer: Pick<FrameWriter, 'push'>) => AsyncIterable<ChatEvent>;
  /** Polled while the step runs: true ends it with its text so far and no tool calls. */
  stopRequested?: () => Promise<boolean>;
  /** Frames the step ends with after its text (the chat's tool calls). */
  closing?: (result: StreamedStep) => UiFrame[];
  /** Written in the transaction of the step's last frames, so a retried step finds it. */
  store: (tx: Db, result: StreamedStep) => Promise<void>;
}

const tag = (turnId: string) => turnId.slice(-8);

/**
 * One model step of a turn: its opening frames (once, whatever the attempt; a cut-off attempt's open text
 * closed and its frames left out), its text streamed as it comes, its tool calls under ids unique in the
 * turn, its closing frames and the policy's record in one transaction. A failure closes the text written
 * so far and is thrown; a stop ends the step with what it said.
 */
export async function runKernelStep(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  step: KernelStep,
  run: RunContext,
): Promise<{ result: StreamedStep; cutOff: boolean }> {
  const { orgId, streamId, turnId } = step;
  const stream = await getStream(deps.sql, orgId, streamId);
  const source = `${turnId}:${step.step}:model`;
  const start: UiFrame | null = stream && !stream.segment_open ? { type: 'start', messageId: step.messageId } : null;
  const { cutOff } = await beginModelStep(deps.sql, orgId, streamId, { model: source, opening: `${turnId}:${step.step}:start` }, start);
  const writer = new FrameWriter(deps.sql, orgId, streamId, source);
  const textId = `text-${step.step}-${run.attempt}-${tag(turnId)}`;
  const result: StreamedStep = { text: '', toolCalls: [], finishReason: 'stop' };
  const stop = new AbortController();
  const signal = AbortSignal.any([run.signal, stop.signal]);
  const beat = setInterval(() => {
    run.heartbeat();
    step.stopRequested?.().then(
      (stopped) => stopped && stop.abort(),
      () => {},
    );
  }, BEAT_MS);
  try {
    const ids = { textId, callId: (n: number) => `call-${step.step}-${n}-${tag(turnId)}` };
    await relayModelStream(step.events(signal, writer), writer, ids, result, run.heartbeat);
  } catch (error) {
    clearInterval(beat);
    if (!stop.signal.aborted || run.signal.aborted) {
      // Failed or canceled mid-answer: what was streamed stays, closed (the turn's end writes the rest).
      await writer.finish(result.text ? [{ type: 'text-end', id: textId }] : [], async () => {}).catch(() => {});
      throw error;
    }
    // Stopped: the answer so far is the step's result, without its tool calls.
    result.toolCalls = [];
    result.finishReason = 'stopped';
  }
  clearInterval(beat);
  const last: UiFrame[] = [...(result.text ? [{ type: 'text-end' as const, id: textId }] : []), ...(step.closing?.(result) ?? [])];
  await writer.finish(last, (tx) => step.store(tx, result));
  return { result, cutOff };
}

/** A turn as its table holds it at its end. */
export interface EndingTurn extends StreamTurn {
  ended: boolean;
}

/**
 * The turn's end, in one transaction (a repeat does nothing): the policy loads its turn locked, the
 * stream's segment is closed (an `error` frame first when the turn failed) and the answer's parts go to
 * `store`, which records them and frees the stream for the next turn.
 */
export async function closeTurn(
  deps: Pick<ServiceDeps, 'sql'> & { logger?: Pick<ServiceDeps['logger'], 'warn'> },
  input: { orgId: string; streamId: string; error: string | null; finishReason: 'stop' | 'error' | 'other' },
  policy: {
    load: (tx: Db) => Promise<EndingTurn | null | undefined>;
    store: (tx: Db, parts: Awaited<ReturnType<typeof closeTurnStream>>) => Promise<void>;
  },
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const turn = await policy.load(tx);
    if (!turn || turn.ended) return;
    const parts = await closeTurnStream(tx, deps, input.orgId, input.streamId, turn, {
      error: input.error,
      finishReason: input.finishReason,
    });
    await policy.store(tx, parts);
  });
}
