/**
 * The AI SDK UI message stream protocol (v1), as data: the frames a streamed answer is made of and
 * the message they build. Shared by every area that streams an assistant's answer (the AI chat, the
 * Analytics Assistant). Field names are those of the `ai` package's `uiMessageChunkSchema`.
 */

export type UiFrame =
  | { type: 'start'; messageId?: string; messageMetadata?: unknown }
  | { type: 'start-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'finish-step' }
  | { type: 'finish'; finishReason?: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other'; messageMetadata?: unknown }
  | { type: 'error'; errorText: string }
  | { type: 'abort'; reason?: string }
  /** A data part (e.g. the Analytics Assistant's `data-sql`); a later frame with the same type and id replaces it; a transient one is no part. */
  | { type: `data-${string}`; id?: string; data: unknown; transient?: boolean };

/** A frame as stored and sent: its id is the SSE `id:` (increasing within a stream); null frame = `[DONE]`. */
export interface StoredFrame {
  id: number;
  frame: UiFrame | null;
}

export type ToolPartState = 'input-available' | 'approval-requested' | 'output-available' | 'output-error' | 'output-denied';

export type UiPart =
  | { type: 'step-start' }
  | { type: 'text'; text: string; state?: 'streaming' | 'done' }
  | {
      type: `tool-${string}`;
      toolCallId: string;
      state: ToolPartState;
      input: unknown;
      output?: unknown;
      errorText?: string;
      approval?: { id: string };
    }
  | { type: `data-${string}`; id?: string; data: unknown };

export type ToolPart = Extract<UiPart, { toolCallId: string }>;

export interface UiMessage {
  id: string;
  role: 'user' | 'assistant' | 'system';
  parts: UiPart[];
  metadata?: unknown;
}

/**
 * The parts the frames build, as the `ai` package's `readUIMessageStream` builds them (a test holds
 * the two equal): text parts by id, tool parts by tool call id, a step-start per step. Frames of a
 * later segment continue the same message.
 */
export function partsFromFrames(frames: Iterable<UiFrame>, initial: UiPart[] = []): UiPart[] {
  const parts: UiPart[] = structuredClone(initial);
  const texts = new Map<string, Extract<UiPart, { type: 'text' }>>();
  const tool = (id: string) => parts.find((p): p is ToolPart => 'toolCallId' in p && p.toolCallId === id);
  for (const f of frames) {
    switch (f.type) {
      case 'start-step':
        parts.push({ type: 'step-start' });
        break;
      case 'text-start': {
        const part = { type: 'text' as const, text: '', state: 'streaming' as const };
        texts.set(f.id, part);
        parts.push(part);
        break;
      }
      case 'text-delta': {
        const part = texts.get(f.id);
        if (part) part.text += f.delta;
        break;
      }
      case 'text-end': {
        const part = texts.get(f.id);
        if (part) part.state = 'done';
        texts.delete(f.id);
        break;
      }
      case 'finish-step':
        texts.clear();
        break;
      case 'tool-input-available': {
        const existing = tool(f.toolCallId);
        if (existing) Object.assign(existing, { state: 'input-available', input: f.input });
        else parts.push({ type: `tool-${f.toolName}`, toolCallId: f.toolCallId, state: 'input-available', input: f.input });
        break;
      }
      case 'tool-approval-request': {
        const part = tool(f.toolCallId);
        if (part) Object.assign(part, { state: 'approval-requested', approval: { id: f.approvalId } });
        break;
      }
      case 'tool-output-available': {
        const part = tool(f.toolCallId);
        if (part) Object.assign(part, { state: 'output-available', output: f.output });
        break;
      }
      case 'tool-output-error': {
        const part = tool(f.toolCallId);
        if (part) Object.assign(part, { state: 'output-error', errorText: f.errorText });
        break;
      }
      case 'tool-output-denied': {
        const part = tool(f.toolCallId);
        if (part) part.state = 'output-denied';
        break;
      }
      default:
        if (f.type.startsWith('data-')) {
          const data = f as Extract<UiFrame, { data: unknown }>;
          if (data.transient) break;
          const same = data.id === undefined ? undefined : parts.find((p) => p.type === data.type && 'id' in p && p.id === data.id);
          if (same) Object.assign(same, { data: data.data });
          else parts.push({ type: data.type, ...(data.id === undefined ? {} : { id: data.id }), data: data.data });
        }
        break;
    }
  }
  return parts;
}

/** The text parts still open (started, not ended) after these frames: what a cut-off writer must close. */
export function openTextIds(frames: Iterable<UiFrame>): string[] {
  const open = new Set<string>();
  for (const f of frames) {
    if (f.type === 'text-start') open.add(f.id);
    else if (f.type === 'text-end') open.delete(f.id);
    else if (f.type === 'finish-step') open.clear();
  }
  return [...open];
}

/** True when the frames leave a step open (a `start-step` not yet followed by its `finish-step`). */
export function stepOpen(frames: Iterable<UiFrame>): boolean {
  let open = false;
  for (const f of frames) {
    if (f.type === 'start-step') open = true;
    else if (f.type === 'finish-step') open = false;
  }
  return open;
}

type FinishReason = Extract<UiFrame, { type: 'finish' }>['finishReason'];

/** Written (transient: no part of the message) when a model step stopped at its token limit. */
export const LENGTH_CUT_FRAME = {
  type: 'data-finish-reason',
  data: { finishReason: 'length' },
  transient: true,
} as const satisfies UiFrame;

/** True when the segment's last step was cut at the model's token limit. */
function lastStepCut(segment: UiFrame[]): boolean {
  for (let i = segment.length - 1; i >= 0; i--) {
    const f = segment[i]!;
    if (f.type === 'start-step') return false;
    if (f.type === LENGTH_CUT_FRAME.type) return true;
  }
  return false;
}

/**
 * What ends a segment whose frames so far are `segment`: open text parts and step closed, `finish`, `[DONE]`.
 * An answer whose last step stopped at the token limit finishes with `length` rather than `stop`.
 */
export function closingFrames(segment: UiFrame[], finishReason: FinishReason): (UiFrame | null)[] {
  const out: (UiFrame | null)[] = openTextIds(segment).map((id) => ({ type: 'text-end' as const, id }));
  if (stepOpen(segment)) out.push({ type: 'finish-step' });
  const reason = finishReason === 'stop' && lastStepCut(segment) ? 'length' : finishReason;
  out.push({ type: 'finish', finishReason: reason }, null);
  return out;
}
