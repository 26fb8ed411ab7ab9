import * as db from '../../db/intelligence';
import type { IcpFitResultRow, IcpFitRunRow } from '../../db/intelligence';
import { accountFacts, scoreIcpFit } from '../../domain/icp-scoring';
import { ICP_FIT_CHUNK } from '../../domain/intelligence';
import { newId } from '../../platform/core/ids';
import { icpFitRunWorkflowRef, icpFitWorkflowId } from '../../workflows/intelligence-messages';
import type { ServiceDeps } from '../deps';
import { iso } from '../views';
import { startWorkflow } from '../workflow-client';
import { profileNotFound } from './profiles';
import { notify, runNotFound, startRun } from './runs';

// ICP-fit runs: a batch of accounts scored against a profile version by the icpFitRunWorkflow
// (`icp-fit:<run_id>`), chunk by chunk, results written as each chunk ends.

const resultView = (r: IcpFitResultRow) => ({
  account_id: r.account_id,
  outcome: r.outcome ?? ('pending' as const),
  fit_score: r.fit_score,
  grade: r.grade,
  breakdown: r.breakdown,
  confidence: r.confidence === null ? null : Number(r.confidence),
});

const icpFitRunSummary = (row: IcpFitRunRow) => ({
  id: row.id,
  kind: 'icp_fit' as const,
  workflow_id: icpFitWorkflowId(row.id),
  status: row.status,
  profile_id: row.profile_id,
  profile_version: row.profile_version,
  account_count: row.account_count,
  progress: { accounts_total: row.account_count, accounts_done: row.scored },
  error: row.error,
  created_at: row.created_at.toISOString(),
  completed_at: iso(row.completed_at),
});

export async function startIcpFitRun(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  actor: string,
  input: { profile_id: string; account_ids: string[] },
) {
  const profile = await db.getProfile(deps.sql, orgId, input.profile_id);
  if (!profile) throw profileNotFound();
  const id = newId();
  const row = await startRun(
    deps,
    orgId,
    id,
    (tx) =>
      db.insertIcpFitRun(tx, orgId, {
        id,
        profile_id: profile.id,
        profile_version: profile.version,
        account_ids: input.account_ids,
        created_by: actor,
      }),
    () =>
      startWorkflow(deps, icpFitRunWorkflowRef, orgId, {
        workflowId: icpFitWorkflowId(id),
        args: [{ orgId, runId: id, accounts: input.account_ids.length }],
      }),
  );
  return { id: row.id, workflow_id: icpFitWorkflowId(row.id), status: row.status };
}

export async function listIcpFitRuns(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  q: { limit: number; offset: number; profile_id?: string },
) {
  return { runs: (await db.listIcpFitRuns(deps.sql, orgId, q)).map(icpFitRunSummary), limit: q.limit, offset: q.offset };
}

export async function getIcpFitRun(deps: Pick<ServiceDeps, 'sql'>, orgId: string, runId: string) {
  const row = await db.getIcpFitRun(deps.sql, orgId, runId);
  if (!row) throw runNotFound();
  const results = await db.icpFitResults(deps.sql, orgId, runId);
  return { ...icpFitRunSummary(row), results: results.map(resultView) };
}

/** Marks the run in progress; null when its creating transaction rolled back. */
export async function openIcpFitRun(deps: Pick<ServiceDeps, 'sql'>, orgId: string, runId: string): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    await db.lockRun(tx, orgId, runId);
    return (await db.updateIcpFitRun(tx, orgId, runId, { status: 'in_progress' })) !== undefined;
  });
}

/**
 * Scores the accounts at positions [from, from + ICP_FIT_CHUNK) with the run's profile version and
 * records each result: an account outside the organization is `not_found`, one with nothing known
 * `no_score`; neither fails the batch.
 */
export async function scoreIcpFitChunk(deps: Pick<ServiceDeps, 'sql'>, orgId: string, runId: string, from: number): Promise<number> {
  const run = await db.getIcpFitRun(deps.sql, orgId, runId);
  if (!run?.profile_id) return 0;
  const version = await db.getProfileVersion(deps.sql, orgId, run.profile_id, run.profile_version);
  if (!version) return 0;
  const pending = await db.icpFitResults(deps.sql, orgId, runId, { from, to: from + ICP_FIT_CHUNK });
  const accounts = new Map(
    (await db.scoringAccounts(deps.sql, orgId, [...new Set(pending.map((p) => p.account_id))])).map((a) => [a.id, a]),
  );
  const results = pending.map((p) => {
    const account = accounts.get(p.account_id);
    if (!account)
      return { position: p.position, outcome: 'not_found' as const, fit_score: null, grade: null, breakdown: [], confidence: null };
    const score = scoreIcpFit(version.criteria, accountFacts(account, account.facts ?? [], account.written));
    return {
      position: p.position,
      outcome: score.outcome,
      fit_score: score.fit_score,
      grade: score.grade,
      breakdown: score.breakdown,
      confidence: score.confidence,
    };
  });
  await deps.sql.begin((tx) => db.writeIcpFitResults(tx, orgId, runId, results));
  return results.length;
}

export async function finishIcpFitRun(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  runId: string,
  status: 'completed' | 'failed' | 'cancelled',
  error?: string,
) {
  await deps.sql.begin(async (tx) => {
    const row = await db.updateIcpFitRun(tx, orgId, runId, { status, error: error ?? null, completed: true });
    if (row) await notify(tx, orgId, row);
  });
}
