import fs from 'node:fs';
import { type FieldOption, type UnreadPhrase, fieldOptions, unreadPhrases, withPhrasesRead } from '../../domain/semantic-layer/completion';
import { type ParseContext, type Understanding, parseQuestion } from '../../domain/semantic-layer/parser';
import type { WordReading } from '../../domain/semantic-layer/reading';
import type { Config } from '../../platform/core/config';
import { type LocalLlmConfig, localLlm, localModelPath } from '../../platform/adapters/llm/llm-local';
import { localChoice } from './local-choice';

/**
 * Where the rules stop: a phrase of the question that nothing read, in a question whose subject the rules
 * did read. The completer names the field the phrase means, under a grammar whose only answers are the
 * subject's fields and "none": it cannot invent a field or change the question's shape, only name one.
 */
export type PlanCompleter = (
  input: { question: string; phrase: string; subject: string; understood: string[]; options: string[] },
  signal?: AbortSignal,
) => Promise<string | null>;

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
  return ({ question, phrase, subject, understood, options }, signal) =>
    localChoice(llm, {
      prompt: [
        `Question: ${question}`,
        `It asks about ${subject}${understood.length ? ` (understood: ${understood.join('; ')})` : ''}.`,
        `Which field of ${subject} does "${phrase}" name? Fields: ${options.join(', ')}.`,
        'Answer "none" if it names none of them.',
      ].join('\n'),
      key: 'field',
      options,
      signal,
    });
}

type Refused = Extract<Understanding, { kind: 'refuse' }>;
type Completed = { phrase: UnreadPhrase; option: FieldOption };

/**
 * A refusal finished by the completer: the question said again with the fields it named and read by the
 * rules; a list they still cannot read shows those fields. Null when a phrase is not a field's name to
 * complete, the completer names none for one of them, or the result is still no plan. What the model
 * read is listed with the plan's words.
 */
export async function completeRefused(
  question: string,
  refused: Refused,
  ctx: ParseContext,
  completer: PlanCompleter,
): Promise<Extract<Understanding, { kind: 'plan' }> | null> {
  const { plan, read: understood } = refused.partial!;
  const phrases = unreadPhrases(refused.words ?? []);
  const options = fieldOptions(ctx.catalog, plan);
  if (!phrases?.length || options.length === 0) return null;
  const subject = plan.entity.replace(/_/g, ' ');
  const done: Completed[] = [];
  for (const phrase of phrases) {
    const term = await completer({ question, phrase: phrase.text, subject, understood, options: options.map((o) => o.term) });
    const option = options.find((o) => o.term === term);
    if (!option) return null;
    done.push({ phrase, option });
  }
  const said = done.map((d) => `"${d.phrase.text}" read by the local model as "${d.option.term}"`);
  const again = parseQuestion(withPhrasesRead(question, done), ctx);
  if (again.kind === 'plan') return { ...again, read: [...again.read, ...said] };
  if (plan.measures.length || plan.dimensions.length || plan.having.length) return null;
  const fields = [...new Set([...plan.fields, ...done.map((d) => d.option.path)])].slice(0, 8);
  return { kind: 'plan', plan: { ...plan, fields }, read: [...understood, ...said], words: withCompletedWords(refused.words ?? [], done) };
}

/** The plan frame's words with each completed phrase read as its field. */
function withCompletedWords(readings: WordReading[], done: Completed[]): WordReading[] {
  return readings.map((r, i) => {
    const hit = done.find((d) => i >= d.phrase.start && i < d.phrase.end);
    return hit ? { word: r.word, as: `field ${hit.option.path} (local model)` } : r;
  });
}
