// A conversation taken over by another engine (its engine was lost, or drained) goes on from its
// recorded turns: the model's context rebuilt from them, and a short line so the caller knows the
// silence was the line's, not the agent's.

export interface RecordedTurn {
  seq: number;
  role: 'agent' | 'caller' | 'tool' | 'system';
  text: string;
  heard_text: string | null;
  audit: Record<string, unknown>;
}

export type ResumedMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: { id: string; name: string; input: unknown }[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** How many times one call's stream is started again (its engine lost) before the service gives up on it. */
export const MAX_STREAM_RESUMES = 5;

/** What the agent says first on the engine that took the call over. */
export const RESUME_LINE = 'Sorry, I lost you for a second. I am back.';

/**
 * The model's messages after the system prompt, from the turns as they were recorded: an agent turn as
 * far as the caller heard it, a tool call with its answer (as the model read it: data, never instructions).
 */
export function resumedMessages(turns: readonly RecordedTurn[]): ResumedMessage[] {
  const messages: ResumedMessage[] = [];
  for (const turn of turns) {
    if (turn.role === 'caller') messages.push({ role: 'user', content: turn.text });
    else if (turn.role === 'agent') {
      const said = turn.heard_text ?? turn.text;
      if (said.trim()) messages.push({ role: 'assistant', content: said });
    } else if (turn.role === 'tool' && typeof turn.audit.tool === 'string') {
      const id = typeof turn.audit.call_id === 'string' ? turn.audit.call_id : `restored-${turn.seq}`;
      messages.push({ role: 'assistant', content: '', toolCalls: [{ id, name: turn.audit.tool, input: turn.audit.input ?? {} }] });
      messages.push({ role: 'tool', toolCallId: id, content: JSON.stringify({ ok: turn.audit.ok !== false, result: turn.text }) });
    }
  }
  return messages;
}

/** Where the engine that took over goes on counting: the next sequence number, the caller's last turn. */
export function resumePoint(turns: readonly RecordedTurn[]): { nextSeq: number; lastCallerSeq: number; heardCaller: boolean } {
  const callers = turns.filter((t) => t.role === 'caller');
  return {
    nextSeq: turns.reduce((max, t) => Math.max(max, t.seq + 1), 0),
    lastCallerSeq: callers.length ? callers[callers.length - 1]!.seq : -1,
    heardCaller: callers.length > 0,
  };
}
