import type { CallingWindow } from '../domain/campaign-schedule';
import { isFinalCampaignStatus, type CampaignStatus } from '../domain/campaigns';
import type { Db } from './client';
import { keysetRows } from './kit/keyset';

export interface CampaignRow {
  id: string;
  org_id: string;
  external_id: string | null;
  name: string;
  status: CampaignStatus;
  configuration_id: string | null;
  agent_number: string | null;
  priority: number;
  agent_id: string | null;
  version: number | null;
  timezone: string;
  calling_window: CallingWindow;
  max_attempts: number;
  retry_backoff_seconds: number;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
  closed_at: Date | null;
  /** Set at create, cleared by the workflow's first step: the row's workflow start is not yet confirmed. */
  workflow_pending_since: Date | null;
}

export type NewCampaign = Omit<
  CampaignRow,
  'status' | 'created_at' | 'updated_at' | 'closed_at' | 'modified_by' | 'workflow_pending_since'
>;

export interface ConcurrencySettingsRow {
  org_id: string;
  concurrency_limit: number;
  /** Pacing (migration 0064); null: the deployment's default. */
  calls_per_second: number | null;
  calls_per_second_per_number: number | null;
  created_by: string;
  modified_by: string;
  created_at: Date;
  updated_at: Date;
}

// The organization's dispatch lock (transaction-scoped advisory lock): taken exclusively by the
// dispatcher's claim, shared by writers that add contacts.
export async function lockDispatch(db: Db, orgId: string, mode: 'exclusive' | 'shared'): Promise<void> {
  if (mode === 'exclusive') await db`SELECT pg_advisory_xact_lock(hashtext('campaign-dispatch'), hashtext(${orgId}))`;
  else await db`SELECT pg_advisory_xact_lock_shared(hashtext('campaign-dispatch'), hashtext(${orgId}))`;
}

export async function insertCampaign(db: Db, orgId: string, c: Omit<NewCampaign, 'org_id'>): Promise<CampaignRow> {
  const [row] = await db<CampaignRow[]>`
    INSERT INTO campaigns (id, org_id, external_id, name, configuration_id, agent_number, priority, agent_id, version,
                           timezone, calling_window, max_attempts, retry_backoff_seconds, created_by, modified_by,
                           workflow_pending_since)
    VALUES (${c.id}, ${orgId}, ${c.external_id}, ${c.name}, ${c.configuration_id}, ${c.agent_number}, ${c.priority},
            ${c.agent_id}, ${c.version}, ${c.timezone}, ${db.json(c.calling_window as never)}, ${c.max_attempts},
            ${c.retry_backoff_seconds}, ${c.created_by}, ${c.created_by}, now())
    RETURNING *`;
  return row!;
}

/**
 * The workflow's first step: its start is confirmed (the sweep leaves the row), and the stored status is
 * its own; undefined when the row is gone.
 */
export async function confirmWorkflowStarted(db: Db, orgId: string, id: string): Promise<{ status: CampaignStatus } | undefined> {
  const [row] = await db<{ status: CampaignStatus }[]>`
    UPDATE campaigns SET workflow_pending_since = NULL WHERE org_id = ${orgId} AND id = ${id} RETURNING status`;
  return row;
}

/** Campaigns, of every organization, whose workflow start has not been confirmed for `olderThanSeconds`. */
export async function pendingWorkflowStarts(db: Db, olderThanSeconds: number, limit: number): Promise<{ org_id: string; id: string }[]> {
  return db<{ org_id: string; id: string }[]>`
    SELECT org_id, id FROM campaigns
    WHERE workflow_pending_since < now() - make_interval(secs => ${olderThanSeconds})
    ORDER BY workflow_pending_since
    LIMIT ${limit}`;
}

export async function findCampaign(db: Db, orgId: string, id: string): Promise<CampaignRow | undefined> {
  const [row]: [CampaignRow?] = await db`SELECT * FROM campaigns WHERE id = ${id} AND org_id = ${orgId}`;
  return row;
}

/** The row, locked against concurrent moves and contact additions until the transaction ends. */
export async function findCampaignForUpdate(db: Db, orgId: string, id: string): Promise<CampaignRow | undefined> {
  const [row]: [CampaignRow?] = await db`SELECT * FROM campaigns WHERE id = ${id} AND org_id = ${orgId} FOR UPDATE`;
  return row;
}

export async function listCampaigns(
  db: Db,
  orgId: string,
  options: { status?: CampaignStatus; limit: number; after?: { t: string; id: string } },
): Promise<(CampaignRow & { cursor_t: string })[]> {
  const { status, limit, after } = options;
  // created_at as text keeps microseconds, so the cursor resumes exactly after its row.
  return keysetRows<CampaignRow>(db, {
    select: db`*`,
    from: db`campaigns`,
    where: db`org_id = ${orgId} ${status ? db`AND status = ${status}` : db``}`,
    limit,
    after,
  });
}

export async function countCampaigns(db: Db, orgId: string, status?: CampaignStatus): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM campaigns WHERE org_id = ${orgId} ${status ? db`AND status = ${status}` : db``}`;
  return row!.n;
}

/** Active campaigns of an organization in dispatch order: higher priority first, then older first. */
export async function activeCampaigns(db: Db, orgId: string): Promise<CampaignRow[]> {
  return db<CampaignRow[]>`
    SELECT * FROM campaigns WHERE org_id = ${orgId} AND status = 'active' ORDER BY priority DESC, created_at, id`;
}

/**
 * Moves a campaign to `status` only from one of the statuses the state table allows (`from`), so the
 * row never takes a move the table forbids whoever writes it; undefined when the row is elsewhere.
 */
export async function setCampaignStatus(
  db: Db,
  orgId: string,
  id: string,
  move: { from: readonly CampaignStatus[]; to: CampaignStatus },
  actor: string | null,
): Promise<CampaignRow | undefined> {
  const closing = isFinalCampaignStatus(move.to);
  const [row]: [CampaignRow?] = await db`
    UPDATE campaigns
    SET status = ${move.to}, updated_at = now(), closed_at = ${closing ? db`now()` : db`NULL`}
        ${actor ? db`, modified_by = ${actor}` : db``}
    WHERE id = ${id} AND org_id = ${orgId} AND status = ANY(${move.from as CampaignStatus[]}::text[])
    RETURNING *`;
  return row;
}

/** Those of the given campaigns agents that do not exist in the organization. */
export async function missingAgents(db: Db, orgId: string, agentIds: string[]): Promise<string[]> {
  if (!agentIds.length) return [];
  const found = await db<{ id: string }[]>`SELECT id FROM agents WHERE org_id = ${orgId} AND id = ANY(${agentIds}::uuid[])`;
  const known = new Set(found.map((r) => r.id));
  return agentIds.filter((id) => !known.has(id));
}

export async function findConcurrencySettings(db: Db, orgId: string): Promise<ConcurrencySettingsRow | undefined> {
  const [row]: [ConcurrencySettingsRow?] = await db`SELECT * FROM campaign_concurrency_settings WHERE org_id = ${orgId}`;
  return row;
}

/** The limit, and the pacing fields given (an omitted one keeps its stored value). */
export async function upsertConcurrencySettings(
  db: Db,
  orgId: string,
  limit: number,
  actor: string,
  pacing: { calls_per_second?: number; calls_per_second_per_number?: number } = {},
): Promise<ConcurrencySettingsRow> {
  const perSecond = pacing.calls_per_second ?? null;
  const perNumber = pacing.calls_per_second_per_number ?? null;
  const [row] = await db<ConcurrencySettingsRow[]>`
    INSERT INTO campaign_concurrency_settings (org_id, concurrency_limit, calls_per_second, calls_per_second_per_number, created_by, modified_by)
    VALUES (${orgId}, ${limit}, ${perSecond}, ${perNumber}, ${actor}, ${actor})
    ON CONFLICT (org_id) DO UPDATE
      SET concurrency_limit = EXCLUDED.concurrency_limit,
          calls_per_second = coalesce(EXCLUDED.calls_per_second, campaign_concurrency_settings.calls_per_second),
          calls_per_second_per_number = coalesce(EXCLUDED.calls_per_second_per_number, campaign_concurrency_settings.calls_per_second_per_number),
          modified_by = EXCLUDED.modified_by, updated_at = now()
    RETURNING *`;
  return row!;
}
