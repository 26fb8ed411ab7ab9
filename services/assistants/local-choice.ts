import type { LocalLlm } from '../../platform/adapters/llm/llm-local';

/** The bound of one choice: past it nothing is chosen (the rules answer without it). */
const CHOICE_TIMEOUT_MS = 4000;

/**
 * One of `options`, or none, as the local model picks it for `prompt`: the output is held by a grammar to
 * `{"<key>": one of the options or "none"}`, so the model cannot answer anything else.
 */
export async function localChoice(
  llm: LocalLlm,
  input: { prompt: string; key: string; options: string[]; signal?: AbortSignal },
): Promise<string | null> {
  const { prompt, key, options, signal } = input;
  const bound = AbortSignal.timeout(CHOICE_TIMEOUT_MS);
  const output = await llm.run({
    messages: [
      { type: 'system', text: 'You read questions about a CRM. Answer with JSON only.' },
      { type: 'user', text: prompt },
    ],
    schema: { type: 'object', properties: { [key]: { enum: [...options, 'none'] } }, required: [key] } as never,
    maxTokens: 24,
    temperature: 0,
    signal: signal ? AbortSignal.any([signal, bound]) : bound,
  });
  const chosen = (JSON.parse(output.text) as Record<string, string | undefined>)[key];
  return chosen && chosen !== 'none' && options.includes(chosen) ? chosen : null;
}
