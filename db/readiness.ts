import type { Axis, FitAxis, ReadinessLabel } from '../domain/readiness';
import type { Db } from './client';

// SQL only: every function takes (db, orgId, ...ids) and filters by org_id.

export interface ReadinessSignalsRow {
  now: Date;
  name: string;
  industry: string | null;
  employee_count: number | null;
  description: string | null;
  tags: string[];
  facts: unknown[] | null;
  written: Record<string, string | number> | null;
  last_research_at: Date | null;
  last_activity_at: Date | null;
  activities_30d: number;
  email_replies_90d: number;
  meetings_90d: number;
  call_activities_90d: number;
  campaign_connected_90d: number;
  campaign_unanswered_90d: number;
  open_deal_stages: string[];
  last_deal_change_at: Date | null;
  open_tasks: number;
  open_tasks_due_soon: number;
}

/**
 * Activity types read as an email reply from the account (activity types are free strings); an `email`
 * activity with direction `inbound` (how outreach records a received reply) counts too.
 */
export const REPLY_TYPES = ['email_reply', 'reply', 'email_received', 'inbound_email'];

/** Everything the three readiness axes read about one account, at the database's clock; undefined when the account is not in the organization. */
export async function loadReadinessSignals(db: Db, orgId: string, accountId: string): Promise<ReadinessSignalsRow | undefined> {
  const [row]: [ReadinessSignalsRow?] = await db`
    WITH acts AS (
      SELECT type, direction, effective_time, due_at FROM activities
      WHERE org_id = ${orgId} AND account_id = ${accountId} AND effective_time > now() - interval '90 days'
    ), phones AS (
      SELECT coalesce(array_agg(phone), '{}') AS list FROM contacts
      WHERE org_id = ${orgId} AND account_id = ${accountId} AND phone IS NOT NULL
    ), calls AS (
      SELECT cc.status, cc.last_outcome FROM campaign_contacts cc, phones
      WHERE cardinality(phones.list) > 0 AND cc.org_id = ${orgId} AND cc.phone_numbers && phones.list
        AND cc.updated_at > now() - interval '90 days'
    )
    SELECT now() AS now, a.name, a.industry, a.employee_count, a.description, a.tags, f.facts, f.written, f.updated_at AS last_research_at,
      (SELECT max(effective_time) FROM activities WHERE org_id = ${orgId} AND account_id = ${accountId} AND effective_time <= now()) AS last_activity_at,
      (SELECT count(*)::int FROM acts WHERE effective_time > now() - interval '30 days' AND effective_time <= now()) AS activities_30d,
      (SELECT count(*)::int FROM acts WHERE (type = ANY(${REPLY_TYPES}) OR (type = 'email' AND direction = 'inbound'))
         AND effective_time <= now()) AS email_replies_90d,
      (SELECT count(*)::int FROM acts WHERE type = 'meeting' AND effective_time <= now()) AS meetings_90d,
      (SELECT count(*)::int FROM acts WHERE type = 'call' AND effective_time <= now()) AS call_activities_90d,
      (SELECT count(*)::int FROM calls WHERE status = 'completed') AS campaign_connected_90d,
      (SELECT count(*)::int FROM calls WHERE status = 'failed' OR last_outcome IN ('no_answer', 'busy', 'failed')) AS campaign_unanswered_90d,
      (SELECT coalesce(array_agg(stage), '{}') FROM deals WHERE org_id = ${orgId} AND account_id = ${accountId}
         AND stage NOT IN ('closed_won', 'closed_lost')) AS open_deal_stages,
      (SELECT max(updated_at) FROM deals WHERE org_id = ${orgId} AND account_id = ${accountId}
         AND stage NOT IN ('closed_won', 'closed_lost')) AS last_deal_change_at,
      (SELECT count(*)::int FROM activities WHERE org_id = ${orgId} AND account_id = ${accountId} AND type = 'task' AND due_at > now()) AS open_tasks,
      (SELECT count(*)::int FROM activities WHERE org_id = ${orgId} AND account_id = ${accountId} AND type = 'task'
         AND due_at > now() AND due_at <= now() + interval '14 days') AS open_tasks_due_soon
    FROM accounts a LEFT JOIN account_facts f ON f.account_id = a.id AND f.org_id = a.org_id
    WHERE a.id = ${accountId} AND a.org_id = ${orgId}`;
  return row;
}

export interface ReadinessProfileRow {
  id: string;
  account_id: string;
  label: ReadinessLabel;
  fit: FitAxis;
  engagement: Axis;
  timing: Axis;
  icp_profile_id: string | null;
  icp_profile_version: number | null;
  trigger: 'manual' | 'nightly';
  computed_at: Date;
}

export async function insertReadinessProfile(
  db: Db,
  orgId: string,
  v: Omit<ReadinessProfileRow, 'computed_at'>,
): Promise<ReadinessProfileRow> {
  const [row] = await db<ReadinessProfileRow[]>`
    INSERT INTO readiness_profiles (id, org_id, account_id, label, fit, engagement, timing, icp_profile_id, icp_profile_version, trigger)
    VALUES (${v.id}, ${orgId}, ${v.account_id}, ${v.label}, ${db.json(v.fit as never)}, ${db.json(v.engagement as never)},
      ${db.json(v.timing as never)}, ${v.icp_profile_id}, ${v.icp_profile_version}, ${v.trigger})
    RETURNING id, account_id, label, fit, engagement, timing, icp_profile_id, icp_profile_version, trigger, computed_at`;
  return row!;
}

export function readinessHistory(db: Db, orgId: string, accountId: string, limit: number) {
  return db<ReadinessProfileRow[]>`
    SELECT id, account_id, label, fit, engagement, timing, icp_profile_id, icp_profile_version, trigger, computed_at
    FROM readiness_profiles WHERE org_id = ${orgId} AND account_id = ${accountId}
    ORDER BY computed_at DESC LIMIT ${limit}`;
}

/**
 * One page of the organization's accounts after `afterId` in id order, each with whether its latest
 * profile is older than `staleBefore` (or missing).
 */
export function accountPage(db: Db, orgId: string, afterId: string | null, staleBefore: Date, limit: number) {
  return db<{ id: string; stale: boolean }[]>`
    SELECT a.id, NOT EXISTS (
      SELECT 1 FROM readiness_profiles p WHERE p.org_id = a.org_id AND p.account_id = a.id AND p.computed_at >= ${staleBefore}
    ) AS stale
    FROM accounts a
    WHERE a.org_id = ${orgId} ${afterId ? db`AND a.id > ${afterId}` : db``}
    ORDER BY a.id LIMIT ${limit}`;
}
