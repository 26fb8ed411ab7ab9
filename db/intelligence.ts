import type { BreakdownEntry } from '../domain/icp-scoring';
import type { Criterion, Fact, RunStatus } from '../domain/intelligence';
import type { Db } from './client';
import { columnsOf, setColumns } from './kit/partial-update';

// SQL only: every function takes (db, orgId, ...ids) and filters by org_id.

export interface IcpProfileRow {
  id: string;
  org_id: string;
  name: string;
  description: string | null;
  version: number;
  criteria: Criterion[];
  is_default: boolean;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface IcpProfileVersionRow {
  profile_id: string;
  version: number;
  criteria: Criterion[];
  created_at: Date;
}

export async function insertProfile(
  db: Db,
  orgId: string,
  v: { id: string; name: string; description: string | null; criteria: Criterion[]; is_default: boolean; created_by: string },
): Promise<IcpProfileRow> {
  const [row] = await db<IcpProfileRow[]>`
    INSERT INTO icp_profiles (id, org_id, name, description, criteria, is_default, created_by)
    VALUES (${v.id}, ${orgId}, ${v.name}, ${v.description}, ${db.json(v.criteria as never)}, ${v.is_default}, ${v.created_by})
    RETURNING *`;
  await db`INSERT INTO icp_profile_versions (org_id, profile_id, version, criteria) VALUES (${orgId}, ${v.id}, 1, ${db.json(v.criteria as never)})`;
  return row!;
}

export async function hasProfiles(db: Db, orgId: string): Promise<boolean> {
  const [row]: [{ any: boolean }?] = await db`SELECT EXISTS (SELECT 1 FROM icp_profiles WHERE org_id = ${orgId}) AS any`;
  return row!.any;
}

export function listProfiles(db: Db, orgId: string, page: { limit: number; offset: number }) {
  return db<IcpProfileRow[]>`
    SELECT * FROM icp_profiles WHERE org_id = ${orgId} ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
}

export async function getProfile(db: Db, orgId: string, profileId: string, lock = false): Promise<IcpProfileRow | undefined> {
  const [row]: [IcpProfileRow?] = lock
    ? await db`SELECT * FROM icp_profiles WHERE id = ${profileId} AND org_id = ${orgId} FOR UPDATE`
    : await db`SELECT * FROM icp_profiles WHERE id = ${profileId} AND org_id = ${orgId}`;
  return row;
}

export async function getDefaultProfile(db: Db, orgId: string): Promise<IcpProfileRow | undefined> {
  const [row]: [IcpProfileRow?] = await db`SELECT * FROM icp_profiles WHERE org_id = ${orgId} AND is_default`;
  return row;
}

export async function clearDefault(db: Db, orgId: string): Promise<void> {
  await db`UPDATE icp_profiles SET is_default = false WHERE org_id = ${orgId} AND is_default`;
}

export async function updateProfile(
  db: Db,
  orgId: string,
  profileId: string,
  patch: { name?: string; description?: string | null; criteria?: Criterion[]; is_default?: boolean },
): Promise<IcpProfileRow> {
  const set = { ...patch, criteria: patch.criteria === undefined ? undefined : db.json(patch.criteria as never) };
  const [row] = await db<IcpProfileRow[]>`
    UPDATE icp_profiles SET ${setColumns(db, set, ['name', 'description', 'is_default', 'criteria'])}, updated_at = now(),
      version = version + ${patch.criteria !== undefined ? 1 : 0}
    WHERE id = ${profileId} AND org_id = ${orgId} RETURNING *`;
  if (patch.criteria !== undefined) {
    await db`INSERT INTO icp_profile_versions (org_id, profile_id, version, criteria) VALUES (${orgId}, ${profileId}, ${row!.version}, ${db.json(patch.criteria as never)})`;
  }
  return row!;
}

export async function deleteProfile(db: Db, orgId: string, profileId: string): Promise<boolean> {
  const rows = await db`DELETE FROM icp_profiles WHERE id = ${profileId} AND org_id = ${orgId} RETURNING id`;
  return rows.length > 0;
}

export function listProfileVersions(db: Db, orgId: string, profileId: string) {
  return db<IcpProfileVersionRow[]>`
    SELECT profile_id, version, criteria, created_at FROM icp_profile_versions
    WHERE org_id = ${orgId} AND profile_id = ${profileId} ORDER BY version DESC`;
}

export async function getProfileVersion(
  db: Db,
  orgId: string,
  profileId: string,
  version: number,
): Promise<IcpProfileVersionRow | undefined> {
  const [row]: [IcpProfileVersionRow?] = await db`
    SELECT profile_id, version, criteria, created_at FROM icp_profile_versions
    WHERE org_id = ${orgId} AND profile_id = ${profileId} AND version = ${version}`;
  return row;
}

// ---- research runs --------------------------------------------------------------------------------

export interface PageOutcome {
  url: string;
  /** fetched: read; missing: the site has no such page (404/410); failed: it could not be read. */
  status: 'fetched' | 'missing' | 'failed';
  error?: string;
}

export interface ResearchRunRow {
  id: string;
  org_id: string;
  account_id: string | null;
  domain: string;
  status: RunStatus;
  pages: PageOutcome[];
  facts: Fact[];
  summary: string | null;
  summary_source: 'llm' | 'builtin' | null;
  applied_fields: string[];
  kept_fields: string[];
  credits_used: number;
  error: string | null;
  created_by: string;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

/** Serializes a run's creation with its workflow's first activity (see services/intelligence/runs.ts). */
export async function lockRun(db: Db, orgId: string, runId: string): Promise<void> {
  await db`SELECT pg_advisory_xact_lock(hashtext('intelligence-run'), hashtext(${`${orgId}:${runId}`}))`;
}

export async function insertResearchRun(
  db: Db,
  orgId: string,
  v: { id: string; account_id: string | null; domain: string; created_by: string },
): Promise<ResearchRunRow> {
  const [row] = await db<ResearchRunRow[]>`
    INSERT INTO research_runs (id, org_id, account_id, domain, created_by)
    VALUES (${v.id}, ${orgId}, ${v.account_id}, ${v.domain}, ${v.created_by}) RETURNING *`;
  return row!;
}

export async function getResearchRun(db: Db, orgId: string, runId: string, lock = false): Promise<ResearchRunRow | undefined> {
  const [row]: [ResearchRunRow?] = lock
    ? await db`SELECT * FROM research_runs WHERE id = ${runId} AND org_id = ${orgId} FOR UPDATE`
    : await db`SELECT * FROM research_runs WHERE id = ${runId} AND org_id = ${orgId}`;
  return row;
}

export function listResearchRuns(db: Db, orgId: string, q: { limit: number; offset: number; account_id?: string; status?: RunStatus }) {
  return db<ResearchRunRow[]>`
    SELECT * FROM research_runs WHERE org_id = ${orgId}
      ${q.account_id ? db`AND account_id = ${q.account_id}` : db``}
      ${q.status ? db`AND status = ${q.status}` : db``}
    ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`;
}

const RESEARCH_RUN_COLUMNS = columnsOf<Pick<ResearchRunRow, ResearchRunPatchColumn>>()([
  'status',
  'pages',
  'facts',
  'summary',
  'summary_source',
  'applied_fields',
  'kept_fields',
  'credits_used',
  'error',
]);
type ResearchRunPatchColumn =
  | 'status'
  | 'pages'
  | 'facts'
  | 'summary'
  | 'summary_source'
  | 'applied_fields'
  | 'kept_fields'
  | 'credits_used'
  | 'error';

/** Moves a run that is not final yet; undefined when it already is (or is gone). */
export async function updateResearchRun(
  db: Db,
  orgId: string,
  runId: string,
  patch: Partial<Pick<ResearchRunRow, ResearchRunPatchColumn>> & {
    started?: boolean;
    completed?: boolean;
  },
): Promise<ResearchRunRow | undefined> {
  const { started, completed, ...fields } = patch;
  const set = {
    ...fields,
    pages: fields.pages ? db.json(fields.pages as never) : fields.pages,
    facts: fields.facts ? db.json(fields.facts as never) : fields.facts,
  };
  const [row]: [ResearchRunRow?] = await db`
    UPDATE research_runs SET ${setColumns(db, set, RESEARCH_RUN_COLUMNS)}
      ${started ? db`, started_at = coalesce(started_at, now())` : db``}
      ${completed ? db`, completed_at = now()` : db``}
    WHERE id = ${runId} AND org_id = ${orgId} AND status IN ('queued', 'in_progress') RETURNING *`;
  return row;
}

export interface AccountFactsRow {
  account_id: string;
  run_id: string;
  facts: Fact[];
  /** Per account column, the value research last wrote there. */
  written: Record<string, string | number>;
  updated_at: Date;
}

export async function getAccountFacts(db: Db, orgId: string, accountId: string, lock = false): Promise<AccountFactsRow | undefined> {
  const [row]: [AccountFactsRow?] = lock
    ? await db`SELECT * FROM account_facts WHERE account_id = ${accountId} AND org_id = ${orgId} FOR UPDATE`
    : await db`SELECT * FROM account_facts WHERE account_id = ${accountId} AND org_id = ${orgId}`;
  return row;
}

export async function upsertAccountFacts(
  db: Db,
  orgId: string,
  accountId: string,
  v: { run_id: string; facts: Fact[]; written: Record<string, string | number> },
): Promise<void> {
  await db`
    INSERT INTO account_facts (account_id, org_id, run_id, facts, written)
    VALUES (${accountId}, ${orgId}, ${v.run_id}, ${db.json(v.facts as never)}, ${db.json(v.written)})
    ON CONFLICT (account_id) DO UPDATE SET run_id = excluded.run_id, facts = excluded.facts, written = excluded.written, updated_at = now()`;
}

// ---- ICP-fit runs ---------------------------------------------------------------------------------

export interface IcpFitRunRow {
  id: string;
  org_id: string;
  profile_id: string | null;
  profile_version: number;
  account_count: number;
  status: RunStatus;
  scored: number;
  error: string | null;
  created_by: string;
  created_at: Date;
  completed_at: Date | null;
}

export interface IcpFitResultRow {
  position: number;
  account_id: string;
  outcome: 'scored' | 'not_found' | 'no_score' | null;
  fit_score: number | null;
  grade: 'A' | 'B' | 'C' | 'D' | null;
  breakdown: BreakdownEntry[];
  confidence: string | null;
}

export async function insertIcpFitRun(
  db: Db,
  orgId: string,
  v: { id: string; profile_id: string; profile_version: number; account_ids: string[]; created_by: string },
): Promise<IcpFitRunRow> {
  const [row] = await db<IcpFitRunRow[]>`
    INSERT INTO icp_fit_runs (id, org_id, profile_id, profile_version, account_count, created_by)
    VALUES (${v.id}, ${orgId}, ${v.profile_id}, ${v.profile_version}, ${v.account_ids.length}, ${v.created_by}) RETURNING *`;
  const rows = v.account_ids.map((account_id, position) => ({ run_id: v.id, position, org_id: orgId, account_id }));
  await db`INSERT INTO icp_fit_results ${db(rows)}`;
  return row!;
}

export async function getIcpFitRun(db: Db, orgId: string, runId: string): Promise<IcpFitRunRow | undefined> {
  const [row]: [IcpFitRunRow?] = await db`SELECT * FROM icp_fit_runs WHERE id = ${runId} AND org_id = ${orgId}`;
  return row;
}

export function listIcpFitRuns(db: Db, orgId: string, q: { limit: number; offset: number; profile_id?: string }) {
  return db<IcpFitRunRow[]>`
    SELECT * FROM icp_fit_runs WHERE org_id = ${orgId}
      ${q.profile_id ? db`AND profile_id = ${q.profile_id}` : db``}
    ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`;
}

export function icpFitResults(db: Db, orgId: string, runId: string, range?: { from: number; to: number }) {
  return db<IcpFitResultRow[]>`
    SELECT position, account_id, outcome, fit_score, grade, breakdown, confidence FROM icp_fit_results
    WHERE org_id = ${orgId} AND run_id = ${runId}
      ${range ? db`AND position >= ${range.from} AND position < ${range.to}` : db``}
    ORDER BY position`;
}

export async function writeIcpFitResults(
  db: Db,
  orgId: string,
  runId: string,
  results: (Omit<IcpFitResultRow, 'confidence' | 'account_id'> & { confidence: number | null })[],
): Promise<void> {
  for (const r of results) {
    await db`
      UPDATE icp_fit_results SET outcome = ${r.outcome}, fit_score = ${r.fit_score}, grade = ${r.grade},
        breakdown = ${db.json(r.breakdown as never)}, confidence = ${r.confidence}
      WHERE org_id = ${orgId} AND run_id = ${runId} AND position = ${r.position}`;
  }
}

export async function updateIcpFitRun(
  db: Db,
  orgId: string,
  runId: string,
  patch: { status?: RunStatus; error?: string | null; completed?: boolean },
): Promise<IcpFitRunRow | undefined> {
  const [row]: [IcpFitRunRow?] = await db`
    UPDATE icp_fit_runs SET
      status = coalesce(${patch.status ?? null}, status),
      error = ${patch.error ?? null},
      scored = (SELECT count(*) FROM icp_fit_results WHERE run_id = ${runId} AND outcome IS NOT NULL)
      ${patch.completed ? db`, completed_at = now()` : db``}
    WHERE id = ${runId} AND org_id = ${orgId} AND status IN ('queued', 'in_progress') RETURNING *`;
  return row;
}

/** The accounts of the organization among the given ids, with what the scorer reads. */
export interface ScoringAccountRow {
  id: string;
  name: string;
  industry: string | null;
  employee_count: number | null;
  description: string | null;
  tags: string[];
  facts: Fact[] | null;
  written: Record<string, string | number> | null;
}

export function scoringAccounts(db: Db, orgId: string, accountIds: string[]) {
  return db<ScoringAccountRow[]>`
    SELECT a.id, a.name, a.industry, a.employee_count, a.description, a.tags, f.facts, f.written
    FROM accounts a LEFT JOIN account_facts f ON f.account_id = a.id AND f.org_id = a.org_id
    WHERE a.org_id = ${orgId} AND a.id = ANY(${accountIds}::uuid[])`;
}

export const RESEARCH_COLUMNS = ['description', 'industry', 'employee_count'] as const;
export type ResearchColumn = (typeof RESEARCH_COLUMNS)[number];

/**
 * Writes one account column only while it still holds `expected` (the value research last wrote, or
 * null): a compare-and-set, so a person's edit made at any moment is never overwritten. True when written.
 */
export async function writeAccountColumn(
  db: Db,
  orgId: string,
  accountId: string,
  column: ResearchColumn,
  value: string | number,
  expected: string | number | null,
): Promise<boolean> {
  const rows = await db`
    UPDATE accounts SET ${db({ [column]: value })}, updated_at = now()
    WHERE id = ${accountId} AND org_id = ${orgId}
      AND ${db(column)}::text IS NOT DISTINCT FROM ${expected === null ? null : String(expected)}
    RETURNING id`;
  return rows.length > 0;
}

export interface ResearchAccountRow {
  id: string;
  domain: string | null;
  website: string | null;
  description: string | null;
  industry: string | null;
  employee_count: number | null;
}

export async function getResearchAccount(db: Db, orgId: string, accountId: string): Promise<ResearchAccountRow | undefined> {
  const [row]: [ResearchAccountRow?] = await db`
    SELECT id, domain, website, description, industry, employee_count FROM accounts WHERE id = ${accountId} AND org_id = ${orgId}`;
  return row;
}

/** Appends one page's outcome and facts to a running run (progress and partial results). */
export async function appendResearchPage(db: Db, orgId: string, runId: string, page: PageOutcome, facts: Fact[]): Promise<void> {
  await db`
    UPDATE research_runs SET pages = pages || ${db.json([page] as never)}, facts = facts || ${db.json(facts as never)}
    WHERE id = ${runId} AND org_id = ${orgId} AND status = 'in_progress'`;
}
