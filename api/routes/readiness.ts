import * as readiness from '../../services/readiness';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, validationError } from '../schemas/common';
import { ReadinessHistory, ReadinessHistoryQuery, ReadinessParams, ReadinessProfile, ReadinessRefreshStarted } from '../schemas/readiness';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const tag = 'Account Readiness' as const;
const accountNotFound = { 404: { description: 'Account not found in the organization', schema: ErrorBody } } as const;

export function registerReadinessRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/accounts/{account_id}/readiness',
    tag,
    summary: "The account's latest readiness profile: fit, engagement and timing, and the label",
    auth: { scope: 'crmRead' },
    params: ReadinessParams,
    responses: {
      200: { description: 'The latest profile', schema: ReadinessProfile },
      404: { description: 'Account not found in the organization, or no profile computed yet', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, auth }) => readiness.getReadiness(deps, orgOf(auth), params.account_id),
  });

  routes.add({
    method: 'get',
    path: '/accounts/{account_id}/readiness/history',
    tag,
    summary: "The account's past readiness profiles, newest first",
    auth: { scope: 'crmRead' },
    params: ReadinessParams,
    query: ReadinessHistoryQuery,
    responses: { 200: { description: 'Profiles', schema: ReadinessHistory }, ...accountNotFound, ...authErrors, ...validationError },
    handler: async ({ params, query, auth }) => readiness.readinessHistory(deps, orgOf(auth), params.account_id, query.limit),
  });

  routes.add({
    method: 'post',
    path: '/accounts/{account_id}/readiness/refresh',
    tag,
    summary: "Recompute the account's readiness profile in a workflow (readiness:<account_id>)",
    auth: { scope: 'crmManage' },
    params: ReadinessParams,
    responses: {
      202: { description: 'Started, or already running: the workflow id either way', schema: ReadinessRefreshStarted },
      ...accountNotFound,
      ...authErrors,
      ...validationError,
      503: { description: 'Workflow engine unavailable', schema: ErrorBody },
    },
    handler: async ({ params, auth }) => reply(202, await readiness.refreshReadiness(deps, orgOf(auth), params.account_id)),
  });
}
