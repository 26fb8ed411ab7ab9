import { WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from '../db/client';
import * as db from '../db/intelligence';
import { memberIdsOfActors } from '../db/notifications';
import type { IcpFitResultRow, IcpFitRunRow, IcpProfileRow, IcpProfileVersionRow, PageOutcome, ResearchRunRow } from '../db/intelligence';
import { PG, isPgError } from '../db/pg-errors';
import { conflict, invalid, notFound } from '../domain/errors';
import {
  ICP_FIT_CHUNK,
  RESEARCH_PAGES,
  accountFieldsFromFacts,
  extractFacts,
  icpFitWorkflowId,
  isFinalRunStatus,
  mergeFacts,
  researchWorkflowId,
  type Criterion,
  type Fact,
  type RunStatus,
} from '../domain/intelligence';
import { accountFacts, scoreIcpFit } from '../domain/icp-scoring';
import { newId } from '../platform/ids';
import { BuiltinWriter, createLlmWriter } from '../platform/llm';
import { organizationAttribute } from '../platform/temporal';
import { WebFetchError, extractPageProfile, fetchPage } from '../platform/web-fetch';
import type { icpFitRunWorkflow, researchRunWorkflow } from '../workflows/intelligence';
import type { ServiceDeps } from './deps';
import { emitEvent } from './notifications';
import { ensureNightlySchedule } from './readiness';

const iso = (d: Date | null) => d?.toISOString() ?? null;
const profileNotFound = () => notFound('ICP profile not found');
const runNotFound = () => notFound('Run not found');

// ---- ICP profiles ---------------------------------------------------------------------------------

export const profileView = (row: IcpProfileRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  version: row.version,
  criteria: row.criteria,
  is_default: row.is_default,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

const versionView = (row: IcpProfileVersionRow) => ({
  profile_id: row.profile_id,
  version: row.version,
  criteria: row.criteria,
  created_at: row.created_at.toISOString(),
});

function duplicateName(error: unknown): never {
  if (isPgError(error, PG.UNIQUE_VIOLATION)) throw conflict('An ICP profile with this name already exists');
  throw error;
}

export interface ProfileInput {
  name: string;
  description?: string | null;
  criteria: Criterion[];
  is_default?: boolean;
}

/**
 * The organization's first profile becomes its default (the fit axis of readiness profiles), and the
 * organization's nightly readiness schedule is made with it, not at the first manual refresh.
 */
export async function createProfile(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  input: ProfileInput,
) {
  const row = await deps.sql
    .begin(async (tx) => {
      await db.lockRun(tx, orgId, 'profiles');
      const isDefault = input.is_default ?? !(await db.hasProfiles(tx, orgId));
      if (isDefault) await db.clearDefault(tx, orgId);
      return db.insertProfile(tx, orgId, {
        id: newId(),
        name: input.name,
        description: input.description ?? null,
        criteria: input.criteria,
        is_default: isDefault,
        created_by: actor,
      });
    })
    .catch(duplicateName);
  if (row.is_default) {
    // Best effort: the profile is saved either way, and the next readiness refresh makes the schedule.
    await ensureNightlySchedule(deps, orgId).catch((error: unknown) =>
      deps.logger.warn(
        { orgId, err: error instanceof Error ? error.message : String(error) },
        'readiness nightly schedule not created yet',
      ),
    );
  }
  return profileView(row);
}

export async function listProfiles(deps: Pick<ServiceDeps, 'sql'>, orgId: string, page: { limit: number; offset: number }) {
  return { profiles: (await db.listProfiles(deps.sql, orgId, page)).map(profileView), limit: page.limit, offset: page.offset };
}

export async function getProfile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string) {
  const row = await db.getProfile(deps.sql, orgId, profileId);
  if (!row) throw profileNotFound();
  return profileView(row);
}

/** A criteria change makes a new version; name, description and the default flag do not. */
export async function updateProfile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string, patch: Partial<ProfileInput>) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send name, description, criteria or is_default');
  const row = await deps.sql
    .begin(async (tx) => {
      if (!(await db.getProfile(tx, orgId, profileId, true))) throw profileNotFound();
      if (patch.is_default === true) await db.clearDefault(tx, orgId);
      return db.updateProfile(tx, orgId, profileId, patch);
    })
    .catch(duplicateName);
  return profileView(row);
}

/** Deleting a profile keeps the runs scored with it (their profile_id becomes null, their version stays). */
export async function deleteProfile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string): Promise<void> {
  if (!(await db.deleteProfile(deps.sql, orgId, profileId))) throw profileNotFound();
}

export async function listProfileVersions(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string) {
  if (!(await db.getProfile(deps.sql, orgId, profileId))) throw profileNotFound();
  return { versions: (await db.listProfileVersions(deps.sql, orgId, profileId)).map(versionView) };
}

// ---- research runs --------------------------------------------------------------------------------

export const researchRunView = (row: ResearchRunRow) => {
  const fetched = row.pages.filter((p) => p.status !== 'failed').length;
  return {
    id: row.id,
    kind: 'research' as const,
    workflow_id: researchWorkflowId(row.id),
    status: row.status,
    account_id: row.account_id,
    domain: row.domain,
    progress: { pages_total: RESEARCH_PAGES.length, pages_done: row.pages.length, pages_failed: row.pages.length - fetched },
    pages: row.pages,
    results: { facts: row.facts, summary: row.summary, summary_source: row.summary_source },
    applied_fields: row.applied_fields,
    kept_fields: row.kept_fields,
    credits_used: row.credits_used,
    error: row.error,
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    completed_at: iso(row.completed_at),
  };
};

export interface ResearchInput {
  account_id?: string;
  domain?: string;
  website?: string;
}

/** The site's root URL: a website as given, a domain over https. */
const siteRoot = (site: { website?: string | null; domain?: string | null }) =>
  site.website ? new URL(site.website).origin : `https://${site.domain!.toLowerCase()}`;

async function startRun<T>(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  id: string,
  insert: (tx: Db) => Promise<T>,
  start: () => Promise<unknown>,
): Promise<T> {
  // Row and workflow start in one transaction: a start Temporal refuses rolls the row back, and the
  // workflow's first activity waits on the run's lock until this transaction ends.
  return deps.sql.begin(async (tx) => {
    await db.lockRun(tx, orgId, id);
    const [row] = await Promise.all([insert(tx), start()]);
    return row;
  }) as Promise<T>;
}

export async function startResearchRun(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  actor: string,
  input: ResearchInput,
) {
  const given = [input.account_id, input.domain, input.website].filter((v) => v !== undefined).length;
  if (given !== 1) throw invalid('Send exactly one of account_id, domain or website');
  let site = { website: input.website ?? null, domain: input.domain ?? null };
  if (input.account_id) {
    const account = await db.getResearchAccount(deps.sql, orgId, input.account_id);
    if (!account) throw notFound('Account not found');
    if (!account.website && !account.domain) throw invalid('The account has neither a website nor a domain to research');
    site = { website: account.website, domain: account.domain };
  }
  const id = newId();
  const root = siteRoot(site);
  const row = await startRun(
    deps,
    orgId,
    id,
    (tx) => db.insertResearchRun(tx, orgId, { id, account_id: input.account_id ?? null, domain: root, created_by: actor }),
    () =>
      deps.temporal.workflow.start<typeof researchRunWorkflow>('researchRunWorkflow', {
        workflowId: researchWorkflowId(id),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ orgId, runId: id }],
        typedSearchAttributes: organizationAttribute(orgId),
      }),
  );
  return { id: row.id, workflow_id: researchWorkflowId(row.id), status: row.status };
}

export async function listResearchRuns(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  q: { limit: number; offset: number; account_id?: string; status?: RunStatus },
) {
  return { runs: (await db.listResearchRuns(deps.sql, orgId, q)).map(researchRunView), limit: q.limit, offset: q.offset };
}

export async function getResearchRun(deps: Pick<ServiceDeps, 'sql'>, orgId: string, runId: string) {
  const row = await db.getResearchRun(deps.sql, orgId, runId);
  if (!row) throw runNotFound();
  return researchRunView(row);
}

/**
 * Asks the run's workflow to stop; the workflow records `cancelled` (keeping what it found so far).
 * A final run is a 409; a run whose workflow is already gone is closed here.
 */
export async function cancelResearchRun(deps: Pick<ServiceDeps, 'sql' | 'temporal'>, orgId: string, runId: string) {
  const row = await db.getResearchRun(deps.sql, orgId, runId);
  if (!row) throw runNotFound();
  if (isFinalRunStatus(row.status)) throw conflict(`The run is already ${row.status}`);
  try {
    await deps.temporal.workflow.getHandle(researchWorkflowId(runId)).cancel();
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
    await db.updateResearchRun(deps.sql, orgId, runId, { status: 'cancelled', completed: true });
  }
  return { id: runId, workflow_id: researchWorkflowId(runId), status: 'cancelling' as const };
}

// Used by the research workflow's activities.

/** Marks the run in progress; null when its creating transaction rolled back (no row). */
export async function openResearchRun(deps: Pick<ServiceDeps, 'sql'>, orgId: string, runId: string): Promise<{ urls: string[] } | null> {
  return deps.sql.begin(async (tx) => {
    await db.lockRun(tx, orgId, runId);
    const row = await db.getResearchRun(tx, orgId, runId, true);
    if (!row) return null;
    await db.updateResearchRun(tx, orgId, runId, { status: 'in_progress', started: true });
    return { urls: RESEARCH_PAGES.map((p) => new URL(p, row.domain).toString()) };
  });
}

/** Reads one page and records its outcome and facts on the run; a page that cannot be read is recorded, not thrown. */
export async function researchPage(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  runId: string,
  url: string,
): Promise<PageOutcome['status']> {
  let outcome: PageOutcome;
  let facts: Fact[] = [];
  try {
    const page = await fetchPage(url, { allowPrivate: deps.config.WEB_FETCH_ALLOW_PRIVATE, timeoutMs: 10_000, maxBytes: 1024 * 1024 });
    const profile = extractPageProfile(page.body, page.url, 20_000);
    const siteName = /<meta[^>]+property=["']og:site_name["'][^>]+content=["']([^"']+)["']/i.exec(page.body)?.[1] ?? null;
    facts = extractFacts({ ...profile, html: page.body, siteName });
    outcome = { url, status: 'fetched' };
  } catch (error) {
    if (!(error instanceof WebFetchError)) throw error;
    const missing = error.code === 'http_status' && /answered (404|410)$/.test(error.message);
    outcome = { url, status: missing ? 'missing' : 'failed', ...(missing ? {} : { error: `${error.code}: ${error.message}` }) };
  }
  await db.appendResearchPage(deps.sql, orgId, runId, outcome, facts);
  return outcome.status;
}

/** What a finished run says (kept small: it goes into the workflow's history). */
export interface ResearchFinish {
  status: RunStatus;
  facts: number;
}

/**
 * Ends a run from what its pages gave: `failed` when the home page could not be read, `incomplete`
 * when another page failed, else `completed`. The facts go onto the account (see writeFactsToAccount),
 * a summary is written (by the LLM when one is configured, else the built-in writer), and only a run
 * that found facts uses a credit.
 */
export async function finishResearchRun(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>,
  orgId: string,
  runId: string,
): Promise<ResearchFinish | null> {
  const run = await db.getResearchRun(deps.sql, orgId, runId);
  if (!run || isFinalRunStatus(run.status)) return run ? { status: run.status, facts: run.facts.length } : null;
  const home = run.pages.find((p) => new URL(p.url).pathname === '/');
  const facts = mergeFacts([run.facts]);
  if (!home || home.status !== 'fetched') {
    const error = home?.error ?? `The site's home page could not be read (${home?.status ?? 'not fetched'})`;
    await closeResearchRun(deps, orgId, runId, 'failed', error);
    return { status: 'failed', facts: 0 };
  }
  const summary = facts.length ? await summarise(deps, facts, run.domain) : { summary: null, source: null, error: null };
  const status: RunStatus = run.pages.some((p) => p.status === 'failed') ? 'incomplete' : 'completed';
  await deps.sql.begin(async (tx) => {
    const applied =
      run.account_id && facts.length ? await writeFactsToAccount(tx, orgId, run.account_id, runId, facts) : { applied: [], kept: [] };
    const row = await db.updateResearchRun(tx, orgId, runId, {
      status,
      facts,
      summary: summary.summary,
      summary_source: summary.source,
      applied_fields: applied.applied,
      kept_fields: applied.kept,
      credits_used: facts.length > 0 ? 1 : 0,
      ...(summary.error ? { error: summary.error } : {}),
      completed: true,
    });
    if (row) await notify(tx, orgId, row);
  });
  return { status, facts: facts.length };
}

async function summarise(
  deps: Pick<ServiceDeps, 'config' | 'logger'>,
  facts: Fact[],
  url: string,
): Promise<{ summary: string; source: 'llm' | 'builtin'; error: string | null }> {
  const values = (field: string) => facts.filter((f) => f.field === field).map((f) => f.value);
  const page = {
    url,
    title: values('name')[0] ?? null,
    description: values('description')[0] ?? null,
    headings: values('text'),
    text: [values('industry'), values('location'), values('technology')]
      .map((v) => v.join(', '))
      .filter(Boolean)
      .join('\n'),
  };
  const writer = createLlmWriter(deps.config, 'summary');
  try {
    return { summary: await writer.summariseCompany(page), source: writer.kind, error: null };
  } catch (error) {
    // A failing LLM costs the run its written summary, never its facts or its outcome; the run says so.
    const message = error instanceof Error ? error.message : String(error);
    deps.logger.warn({ err: message }, 'LLM summary failed; built-in summary used');
    return {
      summary: await new BuiltinWriter().summariseCompany(page),
      source: 'builtin',
      error: `LLM summary failed (built-in summary used): ${message.slice(0, 300)}`,
    };
  }
}

/**
 * Research fills an account column only when it is empty, or still holds the value research itself
 * wrote last time; a value a person entered or edited is kept (and listed in kept_fields). Each write
 * is a compare-and-set, so an edit made while the run finishes wins too. The facts are kept whole on
 * the account (account_facts) for scoring.
 */
async function writeFactsToAccount(tx: Db, orgId: string, accountId: string, runId: string, facts: Fact[]) {
  const account = await db.getResearchAccount(tx, orgId, accountId);
  if (!account) return { applied: [], kept: [] };
  const previous = await db.getAccountFacts(tx, orgId, accountId, true);
  const written: Record<string, string | number> = { ...(previous?.written ?? {}) };
  const applied: string[] = [];
  const kept: string[] = [];
  for (const [column, value] of Object.entries(accountFieldsFromFacts(facts)) as [db.ResearchColumn, string | number][]) {
    const current = account[column];
    const ours = written[column];
    const expected = current === null ? null : ours !== undefined && String(current) === String(ours) ? current : undefined;
    if (expected === undefined) {
      kept.push(column);
      continue;
    }
    if (await db.writeAccountColumn(tx, orgId, accountId, column, value, expected)) {
      written[column] = value;
      applied.push(column);
    } else kept.push(column);
  }
  await db.upsertAccountFacts(tx, orgId, accountId, { run_id: runId, facts, written });
  return { applied, kept };
}

async function notify(tx: Db, orgId: string, row: ResearchRunRow | IcpFitRunRow): Promise<void> {
  const kind = 'domain' in row ? 'research' : 'icp_fit';
  if (row.status === 'cancelled') return;
  await emitEvent(tx, orgId, {
    event_type: row.status === 'failed' ? 'research_run.failed' : 'research_run.completed',
    entity_type: kind === 'research' ? 'research_run' : 'icp_fit_run',
    entity_id: row.id,
    // Whoever asked for the run hears how it ended without subscribing first.
    recipient_user_ids: await memberIdsOfActors(tx, orgId, [row.created_by]),
    payload: {
      kind,
      status: row.status,
      ...(row.error ? { error: row.error } : {}),
      ...('domain' in row ? { domain: row.domain, account_id: row.account_id, facts: row.facts.length } : { scored: row.scored }),
    },
  });
}

/** Closes a run that is not final yet (cancelled, or failed with the reason). */
export async function closeResearchRun(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  runId: string,
  status: 'cancelled' | 'failed',
  error?: string,
) {
  await deps.sql.begin(async (tx) => {
    const row = await db.updateResearchRun(tx, orgId, runId, { status, error: error ?? null, credits_used: 0, completed: true });
    if (row) await notify(tx, orgId, row);
  });
}

// ---- ICP-fit runs ---------------------------------------------------------------------------------

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
      deps.temporal.workflow.start<typeof icpFitRunWorkflow>('icpFitRunWorkflow', {
        workflowId: icpFitWorkflowId(id),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ orgId, runId: id, accounts: input.account_ids.length }],
        typedSearchAttributes: organizationAttribute(orgId),
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
  if (!run || !run.profile_id) return 0;
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

// ---- runs by workflow id --------------------------------------------------------------------------

/** A run named by its workflow id (`research:<id>` or `icp-fit:<id>`), only within the organization. */
export async function getRunByWorkflowId(deps: Pick<ServiceDeps, 'sql'>, orgId: string, workflowId: string) {
  const m = /^(research|icp-fit):([0-9a-f-]{36})$/i.exec(workflowId);
  if (!m) throw runNotFound();
  const row = m[1] === 'research' ? await db.getResearchRun(deps.sql, orgId, m[2]!) : await db.getIcpFitRun(deps.sql, orgId, m[2]!);
  if (!row) throw runNotFound();
  return {
    id: row.id,
    kind: m[1] === 'research' ? ('research' as const) : ('icp_fit' as const),
    workflow_id: workflowId,
    status: row.status,
  };
}
