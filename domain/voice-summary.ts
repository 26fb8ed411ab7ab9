// What a finished conversation comes to, written by rule from its turns (no model: the summary quotes
// what was said, so it is never invented): a short summary and the outcome.

export interface SummaryTurn {
  role: 'agent' | 'caller' | 'tool' | 'system';
  text: string;
  heard_text: string | null;
  audit: Record<string, unknown>;
}

const REASONS: Record<string, string> = {
  caller_hung_up: 'The caller hung up.',
  agent_ended: 'The agent ended the call.',
  silence: 'The call ended after the caller stayed silent.',
  max_duration: 'The call reached its longest allowed duration.',
  voicemail: 'A voicemail greeting answered.',
  transferred: 'The call was transferred.',
  engine_lost: 'The call was lost.',
  error: 'The call failed.',
};

const clip = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

export function conversationSummary(turns: readonly SummaryTurn[], reason: string): string {
  const caller = turns.filter((t) => t.role === 'caller' && t.text.trim());
  const tools = [...new Set(turns.filter((t) => t.role === 'tool').map((t) => String(t.audit.tool ?? 'a tool')))];
  const parts: string[] = [];
  if (caller.length)
    parts.push(
      `The caller said: "${clip(caller[0]!.text, 160)}"${caller.length > 1 ? ` and ${caller.length - 1} more time${caller.length > 2 ? 's' : ''}` : ''}.`,
    );
  else parts.push('The caller said nothing.');
  if (tools.length) parts.push(`The agent used ${tools.join(', ')}.`);
  parts.push(REASONS[reason] ?? `The call ended (${reason}).`);
  return parts.join(' ');
}

export function conversationOutcome(
  turns: readonly SummaryTurn[],
  status: string,
  reason: string,
  transferredTo: string | null,
): Record<string, unknown> {
  const callerTurns = turns.filter((t) => t.role === 'caller').length;
  const disposition =
    reason === 'voicemail'
      ? 'voicemail'
      : transferredTo || reason === 'transferred'
        ? 'transferred'
        : callerTurns === 0
          ? 'no_input'
          : status === 'failed'
            ? 'failed'
            : 'answered';
  return {
    disposition,
    end_reason: reason,
    caller_turns: callerTurns,
    agent_turns: turns.filter((t) => t.role === 'agent').length,
    tools_called: turns.filter((t) => t.role === 'tool').length,
    interruptions: turns.filter((t) => t.role === 'agent' && t.heard_text !== null).length,
    ...(transferredTo ? { transferred_to: transferredTo } : {}),
  };
}

/**
 * A campaign call's status from its conversation's end: a machine that answered is `no_answer` (retried,
 * as a provider's machine verdict is), a failed conversation `failed`, any other end `completed`.
 */
export function callStatusOfConversation(status: string, reason: string): 'completed' | 'no_answer' | 'failed' {
  if (status === 'voicemail' || reason === 'voicemail') return 'no_answer';
  return status === 'failed' ? 'failed' : 'completed';
}
