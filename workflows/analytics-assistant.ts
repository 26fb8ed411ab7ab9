import { patched, proxyActivities } from '@temporalio/workflow';
import type { AnalyticsAssistantActivities } from '../activities/analytics-assistant';
import type { AssistantTranscript } from '../domain/analytics-assistant';
import type { AnalyticsTurnInput } from './analytics-assistant-messages';

// The model call streams its tokens to Postgres itself; what it returns (text and tool calls) is the history.
const model = proxyActivities<AnalyticsAssistantActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 2, nonRetryableErrorTypes: ['ModelRefused'] },
});
const steps = proxyActivities<AnalyticsAssistantActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/**
 * One question of an Analytics Assistant conversation (`analytics-assistant:<conversation_id>`): the
 * model calls run_sql, each attempt runs through the guard and the reader role, a refusal or error
 * goes back to the model, at most `maxAttempts` times; then (or once the model stops calling) it
 * answers in text. The turn's last activity closes the stream and stores the answer.
 */
export async function analyticsAssistantTurnWorkflow(input: AnalyticsTurnInput): Promise<{ outcome: string; attempts: number }> {
  const base = { orgId: input.orgId, conversationId: input.conversationId, turnId: input.turnId };
  const transcript: AssistantTranscript = [];
  let attempts = 0;
  let error: string | null = null;
  // Statements that failed in this turn: the same one again is never run (it would fail the same way).
  const failed = new Set<string>();
  try {
    turn: for (let step = 0; step <= input.maxAttempts; step++) {
      const answer = await model.analyticsModelStep({ ...base, step, transcript, final: attempts >= input.maxAttempts });
      transcript.push({ role: 'assistant', content: answer.text, ...(answer.toolCalls.length ? { toolCalls: answer.toolCalls } : {}) });
      if (answer.toolCalls.length === 0) break;
      for (const call of answer.toolCalls) {
        if (attempts >= input.maxAttempts) {
          transcript.push({ role: 'tool', toolCallId: call.id, content: '{"error":"No attempts left: answer with what you have."}' });
          continue;
        }
        const statement = (call.input as { sql?: unknown } | null)?.sql;
        if (typeof statement === 'string' && failed.has(statement.trim()) && patched('analytics-no-identical-retry')) {
          error = 'The model submitted the same failing statement again; the question was stopped. Try rephrasing it.';
          break turn;
        }
        attempts++;
        const ran = await steps.analyticsRunSql({ ...base, step, attempt: attempts, call });
        transcript.push(ran.message);
        if (!ran.ok && typeof statement === 'string') failed.add(statement.trim());
      }
    }
  } catch (err) {
    error = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
  }
  await steps.analyticsEndTurn({ ...base, error, transcript });
  return { outcome: error ? 'failed' : 'completed', attempts };
}
