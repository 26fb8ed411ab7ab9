import fs from 'node:fs';
import type { Config } from '../../platform/core/config';
import { type LocalLlmConfig, localLlm, localModelPath } from '../../platform/adapters/llm/llm-local';

/**
 * Where the rules stop: a phrase of the question that nothing read, in a question whose subject the rules
 * did read. The completer names the field the phrase means, under a grammar whose only answers are the
 * subject's fields and "none": it cannot invent a field or change the question's shape, only name one.
 */
export type PlanCompleter = (
  input: { question: string; phrase: string; subject: string; understood: string[]; options: string[] },
  signal?: AbortSignal,
) => Promise<string | null>;

/** The bound of one completion: past it the phrase stays unread and the answer says so. */
const COMPLETION_TIMEOUT_MS = 4000;

/**
 * The local model as a completer, when it is switched on (ASSISTANT_MODEL_COMPLETION) and its weights are
 * installed; otherwise none. Off by default: on the project's held-out set it did not raise accuracy
 * without a confident wrong answer (docs/performance.md).
 */
export function localPlanCompleter(
  config: LocalLlmConfig & Pick<Config, 'LLM_BASE_URL' | 'ASSISTANT_MODEL_COMPLETION'>,
): PlanCompleter | undefined {
  if (!config.ASSISTANT_MODEL_COMPLETION || config.LLM_BASE_URL || !fs.existsSync(localModelPath(config))) return undefined;
  const llm = localLlm(config);
  return async ({ question, phrase, subject, understood, options }, signal) => {
    const output = await llm.run({
      messages: [
        { type: 'system', text: 'You read questions about a CRM. Answer with JSON only.' },
        {
          type: 'user',
          text: [
            `Question: ${question}`,
            `It asks about ${subject}${understood.length ? ` (understood: ${understood.join('; ')})` : ''}.`,
            `Which field of ${subject} does "${phrase}" name? Fields: ${options.join(', ')}.`,
            'Answer "none" if it names none of them.',
          ].join('\n'),
        },
      ],
      schema: { type: 'object', properties: { field: { enum: [...options, 'none'] } }, required: ['field'] } as never,
      maxTokens: 24,
      temperature: 0,
      signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(COMPLETION_TIMEOUT_MS)]) : AbortSignal.timeout(COMPLETION_TIMEOUT_MS),
    });
    const field = (JSON.parse(output.text) as { field?: string }).field;
    return field && field !== 'none' && options.includes(field) ? field : null;
  };
}
