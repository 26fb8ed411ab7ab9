import { accountExists } from '../db/accounts';
import * as crmActivities from '../db/crm-activities';
import type { ActivityMetadata, ActivityRow, NewActivity } from '../db/crm-activities';
import type { Db } from '../db/client';
import { lockContactRef } from '../db/contacts';
import { getDeal } from '../db/deals';
import { notFound } from '../domain/errors';
import type { ServiceDeps } from './deps';
import { iso } from './views';

const METADATA_KEYS = ['attendees', 'transcript', 'recording_url', 'location', 'provider'] as const;

export interface ActivityInput extends Partial<ActivityMetadata> {
  type: string;
  summary?: string | null;
  body?: string | null;
  contact_id?: string | null;
  due_at?: string | null;
  duration_minutes?: number | null;
  direction?: string | null;
}

export interface FeedPage {
  excludeFuture: boolean;
  limit: number;
  offset: number;
}

/** The stored activity: summary becomes the subject, the metadata fields go to metadata, direction is dropped. */
function newActivity(input: ActivityInput, actor: string): NewActivity {
  const metadata: ActivityMetadata = {};
  for (const key of METADATA_KEYS) {
    if (input[key] !== undefined && input[key] !== null) (metadata as Record<string, unknown>)[key] = input[key];
  }
  return {
    type: input.type,
    subject: input.summary ?? null,
    body: input.body ?? null,
    contact_id: input.contact_id ?? null,
    due_at: input.due_at ?? null,
    duration_minutes: input.duration_minutes ?? null,
    metadata,
    created_by: actor,
  };
}

export function activityView(row: ActivityRow) {
  const m = row.metadata ?? {};
  return {
    id: row.id,
    type: row.type,
    summary: row.subject,
    body: row.body,
    contact_id: row.contact_id,
    due_at: iso(row.due_at),
    duration_minutes: row.duration_minutes,
    attendees: m.attendees ?? null,
    transcript: m.transcript ?? null,
    recording_url: m.recording_url ?? null,
    location: m.location ?? null,
    provider: m.provider ?? null,
    account_id: row.account_id,
    deal_id: row.deal_id,
    effective_time: row.effective_time.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Checks the contact (held until commit), then inserts on the account or deal in one statement that
 * finds nothing when the owner is not in the organization; 404s name what is missing.
 */
async function create(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: ActivityInput,
  insert: (tx: Db, a: NewActivity) => Promise<string | undefined>,
  missing: string,
) {
  const a = newActivity(input, actor);
  const id = await deps.sql.begin(async (tx) => {
    if (a.contact_id && !(await lockContactRef(tx, orgId, a.contact_id))) throw notFound('Contact not found');
    const inserted = await insert(tx, a);
    if (!inserted) throw notFound(missing);
    return inserted;
  });
  return { id };
}

export const createAccountActivity = (
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  accountId: string,
  input: ActivityInput,
) => create(deps, orgId, actor, input, (tx, a) => crmActivities.insertAccountActivity(tx, orgId, accountId, a), 'Account not found');

/** On the deal, and on the deal's account at write time. */
export const createDealActivity = (deps: Pick<ServiceDeps, 'sql'>, orgId: string, actor: string, dealId: string, input: ActivityInput) =>
  create(deps, orgId, actor, input, (tx, a) => crmActivities.insertDealActivity(tx, orgId, dealId, a), 'Deal not found');

/**
 * Records an email sent to or received from a contact as its `email` activity (on the contact's account
 * too); a contact no longer in the organization records nothing. Runs in the caller's transaction.
 */
export async function recordContactEmail(
  db: Db,
  orgId: string,
  contactId: string,
  email: { subject: string; body: string | null; direction: 'inbound' | 'outbound'; at: Date; actor: string },
): Promise<string | undefined> {
  const a = newActivity(
    { type: 'email', summary: email.subject, body: email.body, contact_id: contactId, due_at: email.at.toISOString() },
    email.actor,
  );
  return crmActivities.insertContactActivity(db, orgId, contactId, a, email.direction);
}

export async function accountFeed(deps: Pick<ServiceDeps, 'sql'>, orgId: string, accountId: string, page: FeedPage) {
  if (!(await accountExists(deps.sql, orgId, accountId))) throw notFound('Account not found');
  const rows = await crmActivities.activityFeed(deps.sql, orgId, { account_id: accountId }, page);
  return rows.map(activityView);
}

export async function dealFeed(deps: Pick<ServiceDeps, 'sql'>, orgId: string, dealId: string, page: FeedPage) {
  if (!(await getDeal(deps.sql, orgId, dealId))) throw notFound('Deal not found');
  const rows = await crmActivities.activityFeed(deps.sql, orgId, { deal_id: dealId }, page);
  return rows.map(activityView);
}

/** Detaches an activity from its account and deal; a repeat answers the same. */
export async function unlinkActivity(deps: Pick<ServiceDeps, 'sql'>, orgId: string, activityId: string) {
  if (!(await crmActivities.unlinkActivity(deps.sql, orgId, activityId))) throw notFound('Activity not found');
  return { id: activityId, account_id: null, deal_id: null };
}
