import { stableJson } from './voice-tools';

// A replay's pure rules: a recorded conversation cut into exchanges (a caller turn and what the agent
// said after it), the recorded tool results a replayed call is answered from, and when a turn changed.

export interface RecordedTurn {
  seq: number;
  role: 'agent' | 'caller' | 'tool' | 'system';
  text: string;
  started_ms: number | null;
  ended_ms: number | null;
  audit: Record<string, unknown>;
}

export type CallerSource = 'recording' | 'synthesized' | 'keys';

export interface ReplayedTool {
  name: string;
  input: unknown;
  ok: boolean;
  /** `recorded`: answered from the conversation's recorded result; `unavailable`: none was recorded; `called`: run for real. */
  source: 'recorded' | 'unavailable' | 'called';
}

export interface ReplayedTurn {
  index: number;
  caller: { seq: number; text: string; heard: string; source: CallerSource; started_ms: number | null; ended_ms: number | null } | null;
  old: { text: string; tools: { name: string; input: unknown; ok: boolean }[] };
  /** The replayed version's answer; text null when it had ended the call before this turn. */
  new: { text: string | null; tools: ReplayedTool[]; error?: string };
  changed: boolean;
  timings: { stt_ms: number | null; llm_first_token_ms: number | null; turn_ms: number };
}

export interface Exchange {
  /** The caller's turn; null for what the agent said before the caller spoke (the first message). */
  caller: RecordedTurn | null;
  /** The agent's turns after it, up to the next caller turn, joined. */
  agentText: string;
  tools: { name: string; input: unknown; ok: boolean; content: string }[];
}

/** The conversation as exchanges, in order; an opening the agent spoke first is the exchange with no caller. */
export function exchangesOf(turns: readonly RecordedTurn[]): Exchange[] {
  const out: Exchange[] = [];
  let current: Exchange | undefined;
  for (const turn of [...turns].sort((a, b) => a.seq - b.seq)) {
    if (turn.role === 'caller') {
      current = { caller: turn, agentText: '', tools: [] };
      out.push(current);
      continue;
    }
    if (!current) {
      current = { caller: null, agentText: '', tools: [] };
      out.push(current);
    }
    if (turn.role === 'agent' && turn.text.trim()) current.agentText = `${current.agentText} ${turn.text.trim()}`.trim();
    if (turn.role === 'tool' && typeof turn.audit.tool === 'string')
      current.tools.push({ name: turn.audit.tool, input: turn.audit.input ?? {}, ok: turn.audit.ok !== false, content: turn.text });
  }
  return out;
}

/** Text as compared: case, punctuation and spacing do not make a turn changed. */
export function normalizedText(text: string | null | undefined): string {
  return (text ?? '')
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export const textChanged = (before: string | null | undefined, after: string | null | undefined): boolean =>
  normalizedText(before) !== normalizedText(after);

export type RecordedToolResults = Map<string, { ok: boolean; content: string }[]>;

const toolKey = (name: string, input: unknown) => `${name}\u0000${stableJson(input ?? {})}`;

/** Every tool result the conversation recorded, by tool name and arguments (a repeated call, in order). */
export function recordedToolResults(turns: readonly RecordedTurn[]): RecordedToolResults {
  const results: RecordedToolResults = new Map();
  for (const e of exchangesOf(turns))
    for (const t of e.tools) {
      const key = toolKey(t.name, t.input);
      results.set(key, [...(results.get(key) ?? []), { ok: t.ok, content: t.content }]);
    }
  return results;
}

/**
 * The recorded answer to a call with this name and these arguments (the same call asked twice takes
 * the next recorded answer, then the last again), or the answer a replay gives when none was recorded.
 */
export function answerFromRecording(
  results: RecordedToolResults,
  used: Map<string, number>,
  name: string,
  input: unknown,
): { ok: boolean; content: string; source: 'recorded' | 'unavailable' } {
  const key = toolKey(name, input);
  const recorded = results.get(key);
  if (!recorded?.length)
    return {
      ok: false,
      content: `The tool ${name} is unavailable in replay: the recorded conversation has no call with these arguments.`,
      source: 'unavailable',
    };
  const n = used.get(key) ?? 0;
  used.set(key, n + 1);
  return { ...recorded[Math.min(n, recorded.length - 1)]!, source: 'recorded' };
}

/** Keys pressed are replayed as their text; only spoken turns have audio to hear again. */
export const isKeysTurn = (text: string): boolean => /^\[The caller pressed the keys: [0-9*#A-D]*\]$/.test(text.trim());
