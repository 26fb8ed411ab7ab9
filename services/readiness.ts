import { ScheduleOverlapPolicy } from '@temporalio/client';
import type { Db } from '../db/client';
import { getDefaultProfile } from '../db/intelligence';
import * as db from '../db/readiness';
import type { ReadinessProfileRow } from '../db/readiness';
import { notFound } from '../domain/errors';
import { accountFacts, scoreIcpFit } from '../domain/icp-scoring';
import type { Fact } from '../domain/intelligence';
import { NIGHTLY_PAGE_SIZE, engagementAxis, fitReason, type FitAxis, readinessLabel, timingAxis } from '../domain/readiness';
import { newId } from '../platform/core/ids';
import {
  readinessNightlyWorkflowId,
  readinessNightlyWorkflowRef,
  readinessRefreshWorkflowRef,
  readinessScheduleId,
  readinessWorkflowId,
  type ReadinessNightlyInput,
  type ReadinessProfileInput,
  type ReadinessRecorded,
  type StalePageInput,
  type StalePageResult,
} from '../workflows/readiness-messages';
import type { ServiceDeps } from './deps';
import { createSchedule, startWorkflow } from './workflow-client';

const accountNotFound = () => notFound('Account not found');

export const profileView = (row: ReadinessProfileRow) => ({
  id: row.id,
  account_id: row.account_id,
  label: row.label,
  fit: row.fit,
  engagement: row.engagement,
  timing: row.timing,
  icp_profile_id: row.icp_profile_id,
  icp_profile_version: row.icp_profile_version,
  trigger: row.trigger,
  computed_at: row.computed_at.toISOString(),
});

/**
 * Computes and records one account's readiness profile: fit is the deterministic ICP score against
 * the organization's default ICP profile (null without one, or when nothing is known), engagement and
 * timing come from the CRM, campaigns and research. Null when the account is not in the organization.
 */
export async function computeReadiness(
  sql: Db,
  orgId: string,
  accountId: string,
  trigger: 'manual' | 'nightly',
): Promise<ReadinessProfileRow | null> {
  const s = await db.loadReadinessSignals(sql, orgId, accountId);
  if (!s) return null;
  const profile = await getDefaultProfile(sql, orgId);
  const facts = accountFacts(s, (s.facts ?? []) as Fact[], s.written);
  const score = profile ? scoreIcpFit(profile.criteria, facts) : null;
  const fitScore = score?.fit_score ?? null;
  const fit: FitAxis = {
    score: fitScore,
    reason: fitReason(fitScore, score?.breakdown ?? null),
    grade: score?.grade ?? null,
    confidence: score?.confidence ?? null,
    signals: score
      ? score.breakdown.map((b) => ({
          name: b.type,
          value: b.result,
          points: b.result === 'matched' && !b.exclude ? b.weight : 0,
          max: b.exclude ? 0 : b.weight,
          criterion: { values: b.values, exclude: b.exclude },
          evidence: b.evidence,
        }))
      : [{ name: 'no_icp_profile', value: null, points: 0, max: 0 }],
  };
  const engagement = engagementAxis({
    now: s.now,
    lastActivityAt: s.last_activity_at,
    activities30d: s.activities_30d,
    emailReplies90d: s.email_replies_90d,
    meetings90d: s.meetings_90d,
    connectedCalls90d: s.call_activities_90d + s.campaign_connected_90d,
    unansweredCalls90d: s.campaign_unanswered_90d,
  });
  const researchFound = (s.facts ?? []).length > 0 ? s.last_research_at : null;
  const timing = timingAxis({
    now: s.now,
    openDealStages: s.open_deal_stages,
    lastDealChangeAt: s.last_deal_change_at,
    openTasks: s.open_tasks,
    openTasksDueSoon: s.open_tasks_due_soon,
    lastResearchAt: researchFound,
  });
  return db.insertReadinessProfile(sql, orgId, {
    id: newId(),
    account_id: accountId,
    label: readinessLabel(fitScore, engagement.score, timing.score),
    fit,
    engagement,
    timing,
    icp_profile_id: profile?.id ?? null,
    icp_profile_version: profile?.version ?? null,
    trigger,
  });
}

type StartDeps = Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>;

/**
 * Starts the account's readiness refresh (`readiness:<account_id>`); a refresh while one runs attaches
 * to it. The organization's nightly schedule is made on the way, once.
 */
export async function refreshReadiness(deps: StartDeps, orgId: string, accountId: string) {
  if (!(await db.loadReadinessSignals(deps.sql, orgId, accountId))) throw accountNotFound();
  const handle = await startWorkflow(deps, readinessRefreshWorkflowRef, orgId, {
    workflowId: readinessWorkflowId(accountId),
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [{ orgId, accountId }],
  });
  await ensureNightlySchedule(deps, orgId);
  return { workflow_id: handle.workflowId };
}

/**
 * The organization's nightly refresh (`readiness-nightly:<org_id>`, READINESS_NIGHTLY_CRON in UTC):
 * created when the organization first asks for readiness, left as it is afterwards (an operator may
 * pause or edit it in Temporal). Overlaps are skipped, and a run only refreshes stale profiles, so a
 * second trigger the same night does nothing.
 */
export async function ensureNightlySchedule(deps: Pick<ServiceDeps, 'temporal' | 'config' | 'logger'>, orgId: string): Promise<void> {
  const created = await createSchedule(deps, readinessNightlyWorkflowRef, orgId, {
    scheduleId: readinessScheduleId(orgId),
    spec: { cronExpressions: [deps.config.READINESS_NIGHTLY_CRON] },
    start: {
      workflowId: readinessNightlyWorkflowId(orgId),
      args: [{ orgId, staleHours: deps.config.READINESS_STALE_HOURS, afterId: null }] satisfies [ReadinessNightlyInput],
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour', pauseOnFailure: false },
  });
  if (created) deps.logger.info({ orgId }, 'readiness nightly schedule created');
}

export async function getReadiness(deps: Pick<ServiceDeps, 'sql'>, orgId: string, accountId: string) {
  const [latest] = await db.readinessHistory(deps.sql, orgId, accountId, 1);
  if (!latest) {
    if (!(await db.loadReadinessSignals(deps.sql, orgId, accountId))) throw accountNotFound();
    throw notFound('No readiness profile yet: POST /accounts/{account_id}/readiness/refresh');
  }
  return profileView(latest);
}

export async function readinessHistory(deps: Pick<ServiceDeps, 'sql'>, orgId: string, accountId: string, limit: number) {
  const rows = await db.readinessHistory(deps.sql, orgId, accountId, limit);
  if (rows.length === 0 && !(await db.loadReadinessSignals(deps.sql, orgId, accountId))) throw accountNotFound();
  return { account_id: accountId, profiles: rows.map(profileView) };
}

/**
 * The refresh workflow's activity: computes and records the profile in one transaction; null (nothing
 * written) when the account is gone.
 */
export async function recordReadiness(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  { orgId, accountId, trigger }: ReadinessProfileInput,
): Promise<ReadinessRecorded | null> {
  const row = await deps.sql.begin((tx) => computeReadiness(tx, orgId, accountId, trigger));
  if (!row) {
    deps.logger.info({ orgId, accountId }, 'account gone before its readiness refresh; nothing recorded');
    return null;
  }
  return { id: row.id, label: row.label, computed_at: row.computed_at.toISOString() };
}

/**
 * One page of the nightly refresh: recomputes the stale profiles among the next NIGHTLY_PAGE_SIZE
 * accounts after `afterId`. Returns where to continue (null when the organization is done).
 */
export async function refreshStalePage(
  deps: Pick<ServiceDeps, 'sql'>,
  { orgId, afterId, staleHours }: StalePageInput,
): Promise<StalePageResult> {
  const staleBefore = new Date(Date.now() - staleHours * 3_600_000);
  const page = await db.accountPage(deps.sql, orgId, afterId, staleBefore, NIGHTLY_PAGE_SIZE);
  let refreshed = 0;
  for (const account of page) {
    if (!account.stale) continue;
    if (await computeReadiness(deps.sql, orgId, account.id, 'nightly')) refreshed++;
  }
  return { refreshed, next: page.length === NIGHTLY_PAGE_SIZE ? page[page.length - 1]!.id : null };
}
