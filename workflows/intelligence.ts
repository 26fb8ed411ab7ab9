import { CancellationScope, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { IntelligenceActivities } from '../activities/intelligence';
import { ICP_FIT_CHUNK, type RunStatus } from '../domain/intelligence';
import type { IcpFitRunInput, IntelligenceRunInput } from './intelligence-messages';

const { openResearchRun, researchPage, finishResearchRun, closeResearchRun, openIcpFitRun, scoreIcpFitChunk, finishIcpFitRun } =
  proxyActivities<IntelligenceActivities>({
    // A page fetch is bounded at 10 s by the fetcher; a finish may call the LLM (60 s).
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
  });

const reason = (error: unknown) =>
  error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);

/**
 * One research run (`research:<run_id>`): reads the site's key pages side by side (each page's
 * outcome and facts are recorded as it comes, so progress and partial results show while it runs),
 * then finishes the run from them. Cancelling the workflow records `cancelled`; an activity that
 * fails for good records `failed`. Histories stay small: activities return statuses, not pages.
 */
export async function researchRunWorkflow(input: IntelligenceRunInput): Promise<RunStatus | 'missing'> {
  try {
    const opened = await openResearchRun(input);
    if (!opened) return 'missing'; // the creating transaction rolled back
    await Promise.all(opened.urls.map((url) => researchPage({ ...input, url })));
    const finished = await finishResearchRun(input);
    return finished?.status ?? 'missing';
  } catch (error) {
    const cancelled = isCancellation(error);
    await CancellationScope.nonCancellable(() =>
      closeResearchRun({ ...input, status: cancelled ? 'cancelled' : 'failed', ...(cancelled ? {} : { error: reason(error) }) }),
    );
    return cancelled ? 'cancelled' : 'failed';
  }
}

/**
 * One ICP-fit batch (`icp-fit:<run_id>`): scores the accounts in chunks of ICP_FIT_CHUNK, one
 * activity each, results written to the database as each chunk ends. A batch of 100 is four
 * activities, so the history stays a few dozen events whatever the accounts hold.
 */
export async function icpFitRunWorkflow(input: IcpFitRunInput): Promise<RunStatus | 'missing'> {
  const { orgId, runId } = input;
  try {
    if (!(await openIcpFitRun({ orgId, runId }))) return 'missing';
    for (let from = 0; from < input.accounts; from += ICP_FIT_CHUNK) await scoreIcpFitChunk({ orgId, runId, from });
    await finishIcpFitRun({ orgId, runId, status: 'completed' });
    return 'completed';
  } catch (error) {
    const cancelled = isCancellation(error);
    await CancellationScope.nonCancellable(() =>
      finishIcpFitRun({ orgId, runId, status: cancelled ? 'cancelled' : 'failed', ...(cancelled ? {} : { error: reason(error) }) }),
    );
    return cancelled ? 'cancelled' : 'failed';
  }
}
