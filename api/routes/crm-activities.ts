import type { z } from 'zod';
import * as crmActivities from '../../services/crm-activities';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
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
} from '../schemas/crm-activities';
import { authErrors, notFoundError, validationError } from '../schemas/common';
import { DealParams } from '../schemas/deals';

// Activities: creation on an account or a deal, the two feeds, and unlink. Every route of the
// activity resource is here, including those under /accounts/... and /deals/....

const feedPage = (q: z.output<typeof ActivityFeedQuery>) => ({
  excludeFuture: q.exclude_future === 'true',
  limit: Math.min(q.limit, ACTIVITY_FEED_MAX),
  offset: q.offset,
});

// The account and deal variants of a route answer alike.
const createResponses = {
  200: { description: 'The id of the new activity', schema: ActivityCreated },
  ...authErrors,
  ...notFoundError,
  ...validationError,
} as const;
const feedResponses = {
  200: { description: 'Activities by effective_time descending (tie-break id descending)', schema: Activity.array() },
  ...authErrors,
  ...notFoundError,
  ...validationError,
} as const;

export function registerActivityRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/accounts/{account_id}/activities',
    tag: 'CRM',
    summary: 'Log an activity on an account',
    auth: { scope: 'crmManage' },
    params: AccountParams,
    body: CreateActivityBody,
    responses: createResponses,
    handler: async ({ params, body, auth }) => crmActivities.createAccountActivity(deps, orgOf(auth), actor(auth), params.account_id, body),
  });

  routes.add({
    method: 'post',
    path: '/deals/{deal_id}/activities',
    tag: 'CRM',
    summary: "Log an activity on a deal (and on the deal's account)",
    auth: { scope: 'crmManage' },
    params: DealParams,
    body: CreateActivityBody,
    responses: createResponses,
    handler: async ({ params, body, auth }) => crmActivities.createDealActivity(deps, orgOf(auth), actor(auth), params.deal_id, body),
  });

  routes.add({
    method: 'get',
    path: '/accounts/{account_id}/activities',
    tag: 'CRM',
    summary: "The account's activity feed, by effective_time descending",
    auth: { scope: 'crmRead' },
    params: AccountParams,
    query: ActivityFeedQuery,
    responses: feedResponses,
    handler: async ({ params, query, auth }) => crmActivities.accountFeed(deps, orgOf(auth), params.account_id, feedPage(query)),
  });

  routes.add({
    method: 'get',
    path: '/deals/{deal_id}/activities',
    tag: 'CRM',
    summary: "The deal's activity feed, by effective_time descending",
    auth: { scope: 'crmRead' },
    params: DealParams,
    query: ActivityFeedQuery,
    responses: feedResponses,
    handler: async ({ params, query, auth }) => crmActivities.dealFeed(deps, orgOf(auth), params.deal_id, feedPage(query)),
  });

  routes.add({
    method: 'post',
    path: '/activities/{activity_id}/unlink-account',
    tag: 'CRM',
    summary: 'Detach an activity from its account and deal',
    auth: { scope: 'crmManage' },
    params: ActivityParams,
    responses: {
      200: { description: 'account_id and deal_id are now null', schema: Unlinked },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => crmActivities.unlinkActivity(deps, orgOf(auth), params.activity_id),
  });
}
