import * as db from '../../db/ai-chat';
import type { ChatRow, TurnRow } from '../../db/ai-chat';
import type { Db } from '../../db/client';
import { type TranscriptMessage, completeTranscript, systemPrompt } from '../../domain/ai-chat';
import type { ChatMessage } from '../../platform/adapters/llm/chat-model';
import { userText } from './turns';

/** Earlier turns the model reads at most, and the characters of history kept (oldest turns go first). */
const HISTORY_TURNS = 20;
const HISTORY_CHARS = 48_000;

const size = (messages: ChatMessage[]) =>
  messages.reduce((n, m) => n + m.content.length + JSON.stringify('toolCalls' in m ? (m.toolCalls ?? []) : []).length, 0);

/**
 * The conversation as the model reads it for one step: the system prompt, the chat's earlier turns
 * (their user messages and transcripts, as the server stored them), this turn's user message and what
 * this turn has done so far.
 */
export async function modelMessages(tx: Db, chat: ChatRow, turn: TurnRow, soFar: TranscriptMessage[]): Promise<ChatMessage[]> {
  const earlier = await db.previousTurns(tx, chat.org_id, chat.id, turn.id, HISTORY_TURNS);
  let history = earlier.map((t): ChatMessage[] => [
    { role: 'user', content: userText(t.user_message) },
    ...completeTranscript(t.transcript),
  ]);
  while (history.length > 1 && size(history.flat()) > HISTORY_CHARS) history = history.slice(1);
  return [
    { role: 'system', content: systemPrompt({ accountId: chat.account_id, today: new Date().toISOString().slice(0, 10) }) },
    ...history.flat(),
    { role: 'user', content: userText(turn.user_message) },
    ...soFar,
  ];
}
