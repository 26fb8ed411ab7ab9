import type { z } from 'zod';
import { accountExists } from '../../db/accounts';
import type { Db } from '../../db/client';
import * as activities from '../../db/activities';
import type { ActivityMetadata, ActivityRow, NewActivity } from '../../db/activities';
import { getDeal, lockContactRef } from '../../db/deals';
import { actor, orgOf, type RequestAuth } from '../auth/context';
import type { AppDeps } from '../deps';
import { notFound } from '../errors';
import type { Routes } from '../route';
import { AccountParams } from '../schemas/accounts';
import {
  ACTIVITY_FEED_MAX,
  Activity,
  ActivityCreated,
  ActivityFeedQuery,
  ActivityParams,
  CreateActivityBody,
  Unlinked,
} from '../schemas/activities';
import { authErrors, notFoundError, validationError } from '../schemas/common';
import { DealParams } from '../schemas/deals';

// Activities: creation on an account or a deal, the two feeds, and unlink. Every route of the
// activity resource is here, including those under /accounts/... and /deals/....

type CreateBody = z.output<typeof CreateActivityBody>;

const METADATA_KEYS = ['attendees', 'transcript', 'recording_url', 'location', 'provider'] as const;

/** The stored activity: summary becomes the subject, the metadata fields go to metadata, direction is dropped. */
function newActivity(body: CreateBody, auth: RequestAuth): NewActivity {
  const metadata: ActivityMetadata = {};
  for (const key of METADATA_KEYS) {
    if (body[key] !== undefined && body[key] !== null) (metadata as Record<string, unknown>)[key] = body[key];
  }
  return {
    type: body.type,
    subject: body.summary ?? null,
    body: body.body ?? null,
    contact_id: body.contact_id ?? null,
    due_at: body.due_at ?? null,
    duration_minutes: body.duration_minutes ?? null,
    metadata,
    created_by: actor(auth),
  };
}

export function activityView(row: ActivityRow): z.output<typeof Activity> {
  const m = row.metadata ?? {};
  return {
    id: row.id,
    type: row.type,
    summary: row.subject,
    body: row.body,
    contact_id: row.contact_id,
    due_at: row.due_at?.toISOString() ?? null,
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

const feedPage = (q: z.output<typeof ActivityFeedQuery>) => ({
  excludeFuture: q.exclude_future === 'true',
  limit: Math.min(q.limit, ACTIVITY_FEED_MAX),
  offset: q.offset,
});

export function registerActivityRoutes(routes: Routes, deps: AppDeps): void {
  const { sql } = deps;

  /**
   * Checks the contact (held until commit), then inserts on the account or deal in one statement that
   * finds nothing when the owner is not in the organization; 404s name what is missing.
   */
  async function create(
    orgId: string,
    body: CreateBody,
    auth: RequestAuth,
    insert: (tx: Db, a: NewActivity) => Promise<string | undefined>,
    missing: string,
  ) {
    const a = newActivity(body, auth);
    const id = await sql.begin(async (tx) => {
      if (a.contact_id && !(await lockContactRef(tx, orgId, a.contact_id))) throw notFound('Contact not found');
      const inserted = await insert(tx, a);
      if (!inserted) throw notFound(missing);
      return inserted;
    });
    return { id };
  }

  routes.add({
    method: 'post',
    path: '/accounts/{account_id}/activities',
    tag: 'CRM',
    summary: 'Log an activity on an account',
    auth: { scope: 'crmManage' },
    params: AccountParams,
    body: CreateActivityBody,
    responses: { 200: { description: 'The id of the new activity', schema: ActivityCreated }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, body, auth }) => {
      const orgId = orgOf(auth);
      return create(orgId, body, auth, (tx, a) => activities.insertAccountActivity(tx, orgId, params.account_id, a), 'Account not found');
    },
  });

  routes.add({
    method: 'post',
    path: '/deals/{deal_id}/activities',
    tag: 'CRM',
    summary: "Log an activity on a deal (and on the deal's account)",
    auth: { scope: 'crmManage' },
    params: DealParams,
    body: CreateActivityBody,
    responses: { 200: { description: 'The id of the new activity', schema: ActivityCreated }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, body, auth }) => {
      const orgId = orgOf(auth);
      return create(orgId, body, auth, (tx, a) => activities.insertDealActivity(tx, orgId, params.deal_id, a), 'Deal not found');
    },
  });

  routes.add({
    method: 'get',
    path: '/accounts/{account_id}/activities',
    tag: 'CRM',
    summary: "The account's activity feed, by effective_time descending",
    auth: { scope: 'crmRead' },
    params: AccountParams,
    query: ActivityFeedQuery,
    responses: {
      200: { description: 'Activities by effective_time descending (tie-break id descending)', schema: Activity.array() },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => {
      const orgId = orgOf(auth);
      if (!(await accountExists(sql, orgId, params.account_id))) throw notFound('Account not found');
      const rows = await activities.activityFeed(sql, orgId, { account_id: params.account_id }, feedPage(query));
      return rows.map(activityView);
    },
  });

  routes.add({
    method: 'get',
    path: '/deals/{deal_id}/activities',
    tag: 'CRM',
    summary: "The deal's activity feed, by effective_time descending",
    auth: { scope: 'crmRead' },
    params: DealParams,
    query: ActivityFeedQuery,
    responses: {
      200: { description: 'Activities by effective_time descending (tie-break id descending)', schema: Activity.array() },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => {
      const orgId = orgOf(auth);
      if (!(await getDeal(sql, orgId, params.deal_id))) throw notFound('Deal not found');
      const rows = await activities.activityFeed(sql, orgId, { deal_id: params.deal_id }, feedPage(query));
      return rows.map(activityView);
    },
  });

  routes.add({
    method: 'post',
    path: '/activities/{activity_id}/unlink-account',
    tag: 'CRM',
    summary: 'Detach an activity from its account and deal',
    auth: { scope: 'crmManage' },
    params: ActivityParams,
    responses: { 200: { description: 'account_id and deal_id are now null', schema: Unlinked }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      if (!(await activities.unlinkActivity(sql, orgOf(auth), params.activity_id))) throw notFound('Activity not found');
      return { id: params.activity_id, account_id: null, deal_id: null };
    },
  });
}
