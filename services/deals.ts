import { lockAccountRef } from '../db/accounts';
import type { Db } from '../db/client';
import { lockContactRef } from '../db/contacts';
import * as deals from '../db/deals';
import type { DealFields, DealRow } from '../db/deals';
import { invalid, notFound } from '../domain/errors';
import { DEFAULT_CURRENCY, type DealStage } from '../domain/deals';
import type { ServiceDeps } from './deps';
import { dealSnapshot, emitDealEvents } from './notifications/emit';
import { iso } from './views';

export function dealView(row: DealRow) {
  return {
    ...dealSnapshot(row),
    stage: row.stage,
    account_id: row.account_id,
    contact_id: row.contact_id,
    close_date: row.close_date,
    tags: row.tags,
    closed_at: iso(row.closed_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A non-null account_id or contact_id must be in the organization (404 otherwise), held until commit. */
async function checkReferences(tx: Db, orgId: string, refs: { account_id?: string | null; contact_id?: string | null }) {
  if (refs.account_id && !(await lockAccountRef(tx, orgId, refs.account_id))) throw notFound('Account not found');
  if (refs.contact_id && !(await lockContactRef(tx, orgId, refs.contact_id))) throw notFound('Contact not found');
}

const dealNotFound = () => notFound('Deal not found');

export interface DealInput {
  name: string;
  stage: DealStage;
  value?: number | null;
  currency?: string | null;
  owner_id?: string | null;
  account_id?: string | null;
  contact_id?: string | null;
  close_date?: string | null;
  tags?: string[];
}

export async function listDeals(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { stage?: DealStage; account_id?: string; owner_id?: string; limit: number; offset: number },
) {
  const rows = await deals.listDeals(deps.sql, orgId, query);
  return rows.map(dealView);
}

export async function createDeal(deps: Pick<ServiceDeps, 'sql'>, orgId: string, input: DealInput, actorUserId: string | null = null) {
  const fields: DealFields = {
    name: input.name,
    stage: input.stage,
    value: input.value ?? null,
    currency: input.currency === undefined ? DEFAULT_CURRENCY : input.currency,
    owner_id: input.owner_id ?? null,
    account_id: input.account_id ?? null,
    contact_id: input.contact_id ?? null,
    close_date: input.close_date ?? null,
    tags: [...new Set(input.tags ?? [])],
  };
  const row = await deps.sql.begin(async (tx) => {
    await checkReferences(tx, orgId, fields);
    const created = await deals.insertDeal(tx, orgId, fields);
    await emitDealEvents(tx, orgId, null, dealSnapshot(created), actorUserId);
    return created;
  });
  return dealView(row);
}

export async function getDeal(deps: Pick<ServiceDeps, 'sql'>, orgId: string, dealId: string) {
  const row = await deals.getDeal(deps.sql, orgId, dealId);
  if (!row) throw dealNotFound();
  return dealView(row);
}

/** Only the fields sent change; null clears; a move into a closed stage stamps closed_at. */
export async function updateDeal(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  dealId: string,
  body: Partial<DealInput>,
  actorUserId: string | null = null,
) {
  if (Object.keys(body).length === 0) throw invalid('No fields to update');
  const patch = (body.tags ? { ...body, tags: [...new Set(body.tags)] } : body) as Partial<DealFields>;
  const row = await deps.sql.begin(async (tx) => {
    // The deal first: another organization's deal is 404 whatever the references say.
    if (!(await deals.lockDealRef(tx, orgId, dealId))) throw dealNotFound();
    await checkReferences(tx, orgId, patch);
    const before = await deals.getDeal(tx, orgId, dealId);
    const updated = await deals.updateDeal(tx, orgId, dealId, patch);
    // Its notification events commit with the change (outbox).
    if (before && updated) await emitDealEvents(tx, orgId, dealSnapshot(before), dealSnapshot(updated), actorUserId);
    return updated;
  });
  if (!row) throw dealNotFound();
  return dealView(row);
}

export async function deleteDeal(deps: Pick<ServiceDeps, 'sql'>, orgId: string, dealId: string): Promise<void> {
  if (!(await deals.deleteDeal(deps.sql, orgId, dealId))) throw dealNotFound();
}
