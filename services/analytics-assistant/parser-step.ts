import type { AssistantTranscript } from '../../domain/analytics-assistant';
import { RUN_SQL_TOOL } from '../../domain/analytics-assistant';
import type { ChatEvent } from '../../platform/adapters/llm/chat-model';
import type { Embedder } from '../../platform/adapters/embedders/embedder';
import type { ServiceDeps } from '../deps';
import type { FrameWriter } from '../ui-stream/writer';
import { composeAnswer, lastResult } from '../assistants/answer';
import type { PlanCompleter } from '../assistants/plan-completer';
import type { TermChooser } from '../assistants/term-chooser';
import { understandQuestion } from '../assistants/understanding';

/**
 * A step of the assistant without a large model, as events like a model's: the first step reads the
 * question into a plan (streamed as a `data-plan` part) and calls run_sql with its SQL; the next writes
 * the answer from the result. A question it cannot express or a request to change data gets a plain
 * sentence saying what it can answer; a name that matches two records gets a question back.
 */
export async function* parserStep(
  deps: Pick<ServiceDeps, 'sql'>,
  input: {
    orgId: string;
    question: string;
    step: number;
    transcript: AssistantTranscript;
    embedder?: Embedder;
    chooser?: TermChooser;
    completer?: PlanCompleter;
  },
  writer: Pick<FrameWriter, 'push'>,
  partId: string,
): AsyncIterable<ChatEvent> {
  if (input.step === 0) {
    const understood = await understandQuestion(deps, input.orgId, input.question, {
      embedder: input.embedder,
      chooser: input.chooser,
      completer: input.completer,
    });
    if (understood.kind === 'plan') {
      writer.push({
        type: 'data-plan',
        id: partId,
        data: { plan: understood.plan, read: understood.read, words: understood.words, sql: understood.compiled.sql },
      });
      yield {
        type: 'tool-call',
        call: {
          id: 'plan',
          name: RUN_SQL_TOOL.name,
          input: { sql: understood.compiled.sql, plan: understood.plan, read: understood.read },
        },
      };
      yield { type: 'finish', reason: 'tool-calls' };
      return;
    }
    yield { type: 'text-delta', delta: understood.text };
    yield { type: 'finish', reason: 'stop' };
    return;
  }
  const { plan, read, result, error } = lastResult(input.transcript);
  const text = error
    ? `The query could not run: ${error}`
    : plan && result
      ? composeAnswer(plan, read, result)
      : 'I could not read a result for this question.';
  yield { type: 'text-delta', delta: text };
  yield { type: 'finish', reason: 'stop' };
}
