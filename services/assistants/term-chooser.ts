import fs from 'node:fs';
import type { Config } from '../../platform/core/config';
import { type LocalLlmConfig, localLlm, localModelPath } from '../../platform/adapters/llm/llm-local';

/**
 * What stays ambiguous after the rules and the embedder: a word of the question that two catalog terms
 * are about equally near. The local model picks one of them, or none, under a grammar whose only
 * allowed answers are those terms: it cannot invent a field, only choose among what the catalog has.
 */
export type TermChooser = (question: string, word: string, options: string[], signal?: AbortSignal) => Promise<string | null>;

/** The bound of one choice: past it the word stays unread (the rules answer without it). */
const CHOICE_TIMEOUT_MS = 4000;

/** The local model as a chooser, when its weights are installed; otherwise none. */
export function localTermChooser(config: LocalLlmConfig & Pick<Config, 'LLM_BASE_URL'>): TermChooser | undefined {
  if (config.LLM_BASE_URL || !fs.existsSync(localModelPath(config))) return undefined;
  const llm = localLlm(config);
  return async (question, word, options, signal) => {
    const output = await llm.run({
      messages: [
        { type: 'system', text: 'You read questions about a CRM. Answer with JSON only.' },
        {
          type: 'user',
          text: `Question: ${question}\nIn this question, which of these does the word "${word}" mean: ${options.join(', ')}? Answer "none" if it means none of them.`,
        },
      ],
      schema: { type: 'object', properties: { means: { enum: [...options, 'none'] } }, required: ['means'] } as never,
      maxTokens: 24,
      temperature: 0,
      signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(CHOICE_TIMEOUT_MS)]) : AbortSignal.timeout(CHOICE_TIMEOUT_MS),
    });
    const means = (JSON.parse(output.text) as { means?: string }).means;
    return means && means !== 'none' && options.includes(means) ? means : null;
  };
}
