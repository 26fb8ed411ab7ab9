import type { Sql } from '../../db/client';
import { abandonSource, appendFrames, framesOfSource } from '../../db/ui-streams';
import { LENGTH_CUT_FRAME, openTextIds, type UiFrame } from '../../domain/ui-message-stream';
import type { ChatEvent } from '../../platform/adapters/llm/chat-model';
import type { FrameWriter } from './writer';

/**
 * The frames around one model step of a turn, for any stream (the AI chat, the Analytics Assistant).
 * A retry after a cut-off attempt (a killed worker) closes the text that attempt left open and marks its
 * frames abandoned, so the stored message leaves them out; the step's opening (`start` when given, then
 * `start-step`) is written once, whatever the attempt. Answers whether a cut-off attempt was closed.
 */
export async function beginModelStep(
  sql: Sql,
  orgId: string,
  streamId: string,
  sources: { model: string; opening: string },
  start: UiFrame | null,
): Promise<{ cutOff: boolean }> {
  const cutOff = await framesOfSource(sql, orgId, streamId, sources.model);
  if (cutOff.length > 0) {
    await sql.begin(async (tx) => {
      await abandonSource(tx, orgId, streamId, sources.model);
      const closing = openTextIds(cutOff).map((id): UiFrame => ({ type: 'text-end', id }));
      await appendFrames(tx, orgId, streamId, `${sources.model}:cut-off`, closing, { abandoned: true });
    });
  }
  if ((await framesOfSource(sql, orgId, streamId, sources.opening)).length === 0) {
    await appendFrames(sql, orgId, streamId, sources.opening, [...(start ? [start] : []), { type: 'start-step' }]);
  }
  return { cutOff: cutOff.length > 0 };
}

/** What a model step streamed so far: filled as events arrive, so a failure mid-answer keeps what was written. */
export interface StreamedStep {
  text: string;
  toolCalls: { id: string; name: string; input: unknown }[];
  finishReason: string;
}

/**
 * Relays one model call into its step's frames as it streams: the text opens once and grows by deltas,
 * tool calls are collected under ids unique in the turn, the finish reason is kept. A step cut at the
 * model's token limit says so in the stream (`LENGTH_CUT_FRAME`), so the answer finishes with `length`.
 * `beat` runs on each event (an activity heartbeat).
 */
export async function relayModelStream(
  events: AsyncIterable<ChatEvent>,
  writer: Pick<FrameWriter, 'push'>,
  ids: { textId: string; callId: (index: number) => string },
  step: StreamedStep,
  beat: () => void,
): Promise<void> {
  for await (const event of events) {
    beat();
    if (event.type === 'text-delta') {
      if (!step.text) writer.push({ type: 'text-start', id: ids.textId });
      step.text += event.delta;
      writer.push({ type: 'text-delta', id: ids.textId, delta: event.delta });
    } else if (event.type === 'tool-call') {
      step.toolCalls.push({ id: ids.callId(step.toolCalls.length), name: event.call.name, input: event.call.input });
    } else {
      step.finishReason = event.reason;
      if (event.reason === 'length') writer.push(LENGTH_CUT_FRAME);
    }
  }
}
