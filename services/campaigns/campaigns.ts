import * as contacts from '../../db/campaign-contacts';
import * as campaigns from '../../db/campaigns';
import type { CampaignRow } from '../../db/campaigns';
import type { Db } from '../../db/client';
import type { CallingWindow } from '../../domain/campaign-schedule';
import type { CampaignStatus } from '../../domain/campaigns';
import { notFound } from '../../domain/errors';
import { newId } from '../../platform/core/ids';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { iso } from '../views';
import { conflictOnUnique } from '../../db/kit/unique';
import { startCampaignWorkflow } from './workflow-start';
import { dialsSimulated } from '../integrations/telephony-accounts';

// A campaign's creation (row, contacts and workflow start) and its reads.

export function campaignView(row: CampaignRow) {
  return {
    id: row.id,
    external_id: row.external_id,
    organization_id: row.org_id,
    name: row.name,
    status: row.status,
    configuration_id: row.configuration_id,
    agent_number: row.agent_number,
    priority: row.priority,
    agent_id: row.agent_id,
    version: row.version,
    timezone: row.timezone,
    calling_window: row.calling_window,
    max_attempts: row.max_attempts,
    retry_backoff_seconds: row.retry_backoff_seconds,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
    closed_at: iso(row.closed_at),
  };
}

export async function campaignOf(db: Db, orgId: string, id: string): Promise<CampaignRow> {
  const row = await campaigns.findCampaign(db, orgId, id);
  if (!row) throw notFound('Campaign not found');
  return row;
}

/** Every agent the calls would use must exist in the organization. */
export async function assertAgents(db: Db, orgId: string, ids: (string | undefined | null)[]): Promise<void> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  const missing = await campaigns.missingAgents(db, orgId, wanted);
  if (missing.length) throw notFound(`Agent not found: ${missing[0]}`);
}

export type NewCampaignContact = contacts.NewContact;

export interface NewCampaignInput {
  name: string;
  external_id?: string | null;
  configuration_id?: string | null;
  agent_number?: string | null;
  priority: number;
  agent_id?: string | null;
  version?: number | null;
  timezone: string;
  calling_window: CallingWindow;
  max_attempts: number;
  retry_backoff_seconds: number;
  contacts: NewCampaignContact[];
}

/**
 * Row and contacts in one transaction (BEGIN, one pipelined round trip with the agent check and the
 * inserts, COMMIT), then the workflow's start, which the answer does not wait for: the row is marked
 * pending until the workflow's first step confirms it, and a start lost here (Temporal unreachable,
 * this process gone) is made by the campaign's first move or by the workers' sweep
 * (`workflow-start.ts`, docs/decisions/campaigns.md).
 */
export async function createCampaign(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  input: NewCampaignInput,
) {
  const id = newId();
  const agents = [...new Set([input.agent_id, ...input.contacts.map((c) => c.agent_id)].filter((a): a is string => !!a))];
  const row = await deps.sql.begin(async (tx) => {
    // One round trip: postgres.js pipelines statements issued together on the transaction's connection.
    const [missing, inserted, stored] = await Promise.allSettled([
      campaigns.missingAgents(tx, orgId, agents),
      campaigns.insertCampaign(tx, orgId, {
        id,
        external_id: input.external_id ?? null,
        name: input.name,
        configuration_id: input.configuration_id ?? null,
        agent_number: input.agent_number ?? null,
        priority: input.priority,
        agent_id: input.agent_id ?? null,
        version: input.version ?? null,
        timezone: input.timezone,
        calling_window: input.calling_window,
        max_attempts: input.max_attempts,
        retry_backoff_seconds: input.retry_backoff_seconds,
        created_by: actor,
      }),
      contacts.insertContacts(tx, orgId, id, input.contacts),
    ]);
    // In pipeline order: the first failure is the cause, the later ones only say the transaction aborted.
    if (missing.status === 'fulfilled' && missing.value.length) throw notFound(`Agent not found: ${missing.value[0]}`);
    const lost = [missing, inserted, stored].find((r) => r.status === 'rejected');
    if (lost) {
      const error: unknown = lost.reason;
      conflictOnUnique(error, 'A campaign with this external_id already exists');
      throw error;
    }
    return (inserted as PromiseFulfilledResult<CampaignRow>).value;
  });
  deps.logger.info({ campaignId: id, contacts: input.contacts.length }, 'campaign created');
  startCampaignWorkflow(deps, orgId, id).catch((error: unknown) =>
    deps.logger.warn({ err: error, campaignId: id }, 'campaign workflow not started; its first move or the sweep starts it'),
  );
  return { ...campaignView(row), simulated: await dialsSimulated(deps, orgId) };
}

export async function listCampaigns(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  query: { status?: CampaignStatus; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    campaigns.listCampaigns(deps.sql, orgId, { status: query.status, limit: query.limit, after }),
    campaigns.countCampaigns(deps.sql, orgId, query.status),
  ]);
  const simulated = await dialsSimulated(deps, orgId);
  return cursorPage(
    rows,
    query.limit,
    total,
    (last) => ({ t: last.cursor_t, id: last.id }),
    (row) => ({ ...campaignView(row), simulated }),
  );
}

export async function getCampaign(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, campaignId: string) {
  const row = await campaignOf(deps.sql, orgId, campaignId);
  const [progress, simulated] = await Promise.all([contacts.progressOf(deps.sql, orgId, row.id), dialsSimulated(deps, orgId)]);
  return { ...campaignView(row), simulated, progress };
}
