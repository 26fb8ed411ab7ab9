import * as icpFit from '../services/intelligence/icp-fit';
import * as research from '../services/intelligence/research';
import type {
  IcpFitChunk,
  IcpFitFinish,
  IntelligenceRunInput,
  ResearchClosing,
  ResearchPageStep,
} from '../workflows/intelligence-messages';
import type { ActivityDeps } from './deps';

/** The research and ICP-fit workflows' side effects; each returns only what the workflow needs. */
export function createIntelligenceActivities(deps: ActivityDeps) {
  return {
    openResearchRun: ({ orgId, runId }: IntelligenceRunInput) => research.openResearchRun(deps, orgId, runId),
    researchPage: ({ orgId, runId, url }: ResearchPageStep) => research.researchPage(deps, orgId, runId, url),
    finishResearchRun: ({ orgId, runId }: IntelligenceRunInput) => research.finishResearchRun(deps, orgId, runId),
    closeResearchRun: ({ orgId, runId, status, error }: ResearchClosing) => research.closeResearchRun(deps, orgId, runId, status, error),
    openIcpFitRun: ({ orgId, runId }: IntelligenceRunInput) => icpFit.openIcpFitRun(deps, orgId, runId),
    scoreIcpFitChunk: ({ orgId, runId, from }: IcpFitChunk) => icpFit.scoreIcpFitChunk(deps, orgId, runId, from),
    finishIcpFitRun: ({ orgId, runId, status, error }: IcpFitFinish) => icpFit.finishIcpFitRun(deps, orgId, runId, status, error),
  };
}

/** What the intelligence workflows may call: their `proxyActivities<IntelligenceActivities>` type. */
export type IntelligenceActivities = ReturnType<typeof createIntelligenceActivities>;
