import * as contacts from '../../db/campaign-contacts';
import * as campaigns from '../../db/campaigns';
import { ACCEPTS_CONTACTS, type ContactState } from '../../domain/campaigns';
import { conflict, notFound, unprocessable } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { iso } from '../views';
import { assertAgents, campaignOf, type NewCampaignContact } from './campaigns';
import { signalDispatcher } from './dispatch';

// A campaign's contacts: listed with their state and attempts, added while it is paused or active.

function contactView(row: contacts.ContactRow) {
  return {
    id: row.id,
    campaign_id: row.campaign_id,
    external_id: row.external_id,
    phone_numbers: row.phone_numbers,
    timezone: row.timezone,
    scheduled_at: iso(row.scheduled_at),
    agent_id: row.agent_id,
    agent_number: row.agent_number,
    agent_version: row.agent_version,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: iso(row.next_attempt_at),
    last_outcome: row.last_outcome,
    data: row.data,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export async function listCampaignContacts(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  campaignId: string,
  query: { status?: ContactState; limit: number; cursor?: string },
) {
  const row = await campaignOf(deps.sql, orgId, campaignId);
  const after = decodeCursor(query.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    contacts.listContacts(deps.sql, orgId, row.id, { status: query.status, limit: query.limit, after }),
    contacts.countContacts(deps.sql, orgId, row.id, query.status),
  ]);
  return cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), contactView);
}

/** Adds contacts to a paused or active campaign; an active one wakes the dispatcher. */
export async function addContacts(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  campaignId: string,
  input: { contacts: NewCampaignContact[] },
) {
  const { sql } = deps;
  const current = await campaignOf(sql, orgId, campaignId);
  if (!current.agent_id) {
    const fields = input.contacts.flatMap((c, i) =>
      c.agent_id
        ? []
        : [{ loc: ['body', 'contacts', i, 'agent_id'], msg: 'agent_id is required on the contact when the campaign has none' }],
    );
    if (fields.length) throw unprocessable(fields);
  }
  await assertAgents(
    sql,
    orgId,
    input.contacts.map((c) => c.agent_id),
  );
  await sql.begin(async (tx) => {
    // Shared dispatch lock: the dispatcher's next claim waits for these rows; the row lock orders
    // this against a concurrent cancel.
    await campaigns.lockDispatch(tx, orgId, 'shared');
    const row = await campaigns.findCampaignForUpdate(tx, orgId, campaignId);
    if (!row) throw notFound('Campaign not found');
    if (!ACCEPTS_CONTACTS.includes(row.status)) throw conflict(`Cannot add contacts to a campaign that is ${row.status}`);
    await contacts.insertContacts(tx, orgId, row.id, input.contacts);
    if (row.status === 'active') await signalDispatcher(deps, orgId);
  });
  return { campaign_id: campaignId, added: input.contacts.length, progress: await contacts.progressOf(sql, orgId, campaignId) };
}
