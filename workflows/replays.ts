import { ApplicationFailure, proxyActivities, setHandler } from '@temporalio/workflow';
import type { ReplayActivities } from '../activities/replays';
import { type ReplayEngineActivities, type ReplayInput, type ReplayCounts, replayToolUpdate } from './replay-messages';

const { beginReplay, failReplay } = proxyActivities<ReplayActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 10 },
});
const { runReplayTool } = proxyActivities<ReplayActivities>({
  // As a conversation's tool call: a tool's own timeout is at most 60 s.
  startToCloseTimeout: '75 seconds',
  retry: { initialInterval: '500 ms', maximumAttempts: 2 },
});

/**
 * One replay (`replay:<id>`): marked running, its turns run by an engine (on the engines' queue, where
 * the speech models and the model are), its tool calls — when the request asked for real ones — run
 * here once each as the conversation's are, and a failure written on the row.
 */
export async function replayWorkflow(input: ReplayInput): Promise<ReplayCounts | null> {
  const ref = { orgId: input.orgId, replayId: input.replayId };
  setHandler(replayToolUpdate, (call) => runReplayTool({ ...ref, ...call }));
  const { runReplay } = proxyActivities<ReplayEngineActivities>({
    taskQueue: input.engineQueue,
    // Waiting for a free engine is bounded too: a deployment with no engine fails the replay, saying so.
    scheduleToStartTimeout: '30 minutes',
    // Each turn heartbeats; a replay of the longest conversation fits well inside this.
    startToCloseTimeout: '20 minutes',
    heartbeatTimeout: '2 minutes',
    retry: { initialInterval: '2 seconds', maximumAttempts: 2, nonRetryableErrorTypes: ['ReplayRefused'] },
  });
  const started = await beginReplay(ref);
  if (!started) return null;
  try {
    return await runReplay(ref);
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    const message = (cause?.message || (error as Error).message || 'the replay failed').slice(0, 500);
    await failReplay({ ...ref, error: message });
    throw ApplicationFailure.nonRetryable(message, 'ReplayFailed');
  }
}
