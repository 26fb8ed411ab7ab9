import type { Db } from '../../db/client';
import * as db from '../../db/intelligence';
import type { PageOutcome, ResearchRunRow } from '../../db/intelligence';
import { conflict, invalid, notFound } from '../../domain/errors';
import {
  RESEARCH_PAGES,
  accountFieldsFromFacts,
  extractFacts,
  isFinalRunStatus,
  mergeFacts,
  type Fact,
  type RunStatus,
} from '../../domain/intelligence';
import { newId } from '../../platform/core/ids';
import { BuiltinWriter, createLlmWriter } from '../../platform/adapters/llm/llm';
import { WebFetchError, extractPageProfile, fetchPage } from '../../platform/adapters/web/fetch';
import { researchRunWorkflowRef, researchWorkflowId, type ResearchFinish } from '../../workflows/intelligence-messages';
import type { ServiceDeps } from '../deps';
import { iso } from '../views';
import { cancelWorkflow, startWorkflow } from '../workflow-client';
import { notify, runNotFound, startRun } from './runs';

// Research runs: a company's key pages read by the researchRunWorkflow (`research:<run_id>`), their
// facts written onto the account, and a summary.

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
    () => startWorkflow(deps, researchRunWorkflowRef, orgId, { workflowId: researchWorkflowId(id), args: [{ orgId, runId: id }] }),
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
  const asked = await cancelWorkflow(deps, researchWorkflowId(runId));
  if (!asked) await db.updateResearchRun(deps.sql, orgId, runId, { status: 'cancelled', completed: true });
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
  if (home?.status !== 'fetched') {
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
