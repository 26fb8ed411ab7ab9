import { beginReplay, failReplay, runReplayTool } from '../services/conversations/replay-runs';
import type { ReplayRef, ReplayToolRequest } from '../workflows/replay-messages';
import type { ActivityDeps } from './deps';

export function createReplayActivities(deps: ActivityDeps) {
  return {
    beginReplay: (ref: ReplayRef) => beginReplay(deps, ref),
    failReplay: (input: ReplayRef & { error: string }) => failReplay(deps, input),
    runReplayTool: (input: ReplayRef & ReplayToolRequest) => runReplayTool(deps, input),
  };
}

/** What the replay workflow calls on the worker's queue (its turns run on the engines'). */
export type ReplayActivities = ReturnType<typeof createReplayActivities>;
