import type { ChatModel } from '../platform/adapters/llm/chat-model';

/**
 * One short model call before the first conversation: the local model loads on its first call (seconds
 * on a busy CPU), which no caller should wait through. A failure here is the first call's to report.
 */
export async function warmUp(model: ChatModel, timeoutMs = 120_000): Promise<number> {
  const started = performance.now();
  try {
    for await (const _ of model.stream({
      messages: [{ role: 'user', content: 'Say OK.' }],
      tools: [],
      maxTokens: 2,
      signal: AbortSignal.timeout(timeoutMs),
    }));
  } catch {
    // The first conversation will say what is wrong.
  }
  return Math.round(performance.now() - started);
}
