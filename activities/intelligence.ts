import * as intelligence from '../services/intelligence';
import type { ActivityDeps } from './deps';

export interface RunRef {
  orgId: string;
  runId: string;
}

/** The research and ICP-fit workflows' side effects; each returns only what the workflow needs. */
export function createIntelligenceActivities(deps: ActivityDeps) {
  return {
    openResearchRun: ({ orgId, runId }: RunRef) => intelligence.openResearchRun(deps, orgId, runId),
    researchPage: ({ orgId, runId, url }: RunRef & { url: string }) => intelligence.researchPage(deps, orgId, runId, url),
    finishResearchRun: ({ orgId, runId }: RunRef) => intelligence.finishResearchRun(deps, orgId, runId),
    closeResearchRun: ({ orgId, runId, status, error }: RunRef & { status: 'cancelled' | 'failed'; error?: string }) =>
      intelligence.closeResearchRun(deps, orgId, runId, status, error),
    openIcpFitRun: ({ orgId, runId }: RunRef) => intelligence.openIcpFitRun(deps, orgId, runId),
    scoreIcpFitChunk: ({ orgId, runId, from }: RunRef & { from: number }) => intelligence.scoreIcpFitChunk(deps, orgId, runId, from),
    finishIcpFitRun: ({ orgId, runId, status, error }: RunRef & { status: 'completed' | 'failed' | 'cancelled'; error?: string }) =>
      intelligence.finishIcpFitRun(deps, orgId, runId, status, error),
  };
}
