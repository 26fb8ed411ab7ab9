import fs from 'node:fs';
import type { Config } from '../../platform/core/config';
import { type LocalLlmConfig, localLlm, localModelPath } from '../../platform/adapters/llm/llm-local';
import { localChoice } from './local-choice';

/**
 * What stays ambiguous after the rules and the embedder: a word of the question that two catalog terms
 * are about equally near. The local model picks one of them, or none, under a grammar whose only
 * allowed answers are those terms: it cannot invent a field, only choose among what the catalog has.
 */
export type TermChooser = (question: string, word: string, options: string[], signal?: AbortSignal) => Promise<string | null>;

/** The local model as a chooser, when its weights are installed; otherwise none. */
export function localTermChooser(config: LocalLlmConfig & Pick<Config, 'LLM_BASE_URL'>): TermChooser | undefined {
  if (config.LLM_BASE_URL || !fs.existsSync(localModelPath(config))) return undefined;
  const llm = localLlm(config);
  return (question, word, options, signal) =>
    localChoice(llm, {
      prompt: `Question: ${question}\nIn this question, which of these does the word "${word}" mean: ${options.join(', ')}? Answer "none" if it means none of them.`,
      key: 'means',
      options,
      signal,
    });
}
