import type { z } from 'zod';
import * as accounts from '../../db/accounts';
import type { AccountRow, HealthScoreRow } from '../../db/accounts';
import { organizationAttribute } from '../../platform/temporal';
import type { accountHealthRefresh } from '../../workflows/accounts';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { badRequest, notFound } from '../errors';
import { reply, type Routes } from '../route';
import {
  ACCOUNT_LIST_MAX,
  Account,
  AccountHealth,
  AccountListItem,
  AccountListQuery,
  AccountParams,
  CreateAccountBody,
  HealthQuery,
  UpdateAccountBody,
  WorkflowStarted,
} from '../schemas/accounts';
import { ErrorBody, authErrors, notFoundError, validationError, uniqueTags } from '../schemas/common';

// Accounts: list, CRUD and health. The activity feed under /accounts/{account_id}/activities lives
// with the other activity routes in activities.ts.

const HEALTH_HISTORY_MAX = 200;

/** Workflow id of an account's health refresh: one run at a time per account. */
export const accountHealthWorkflowId = (accountId: string) => `account-health:${accountId}`;

export function accountView(row: AccountRow): z.output<typeof Account> {
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    industry: row.industry as z.output<typeof Account>['industry'],
    website: row.website,
    description: row.description,
    owner_id: row.owner_id,
    employee_count: row.employee_count,
    health_score: row.health_score,
    tags: row.tags,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const healthEntry = (row: HealthScoreRow) => ({
  id: row.id,
  score: row.score,
  factors: row.factors,
  computed_at: row.computed_at.toISOString(),
});


const accountNotFound = () => notFound('Account not found');

export function registerAccountRoutes(routes: Routes, deps: AppDeps): void {
  const { sql, temporal, config } = deps;

  routes.add({
    method: 'get',
    path: '/accounts',
    tag: 'CRM',
    summary: 'List accounts by name; bare array of list items, no total',
    auth: { scope: 'crmRead' },
    query: AccountListQuery,
    responses: { 200: { description: 'Accounts ordered by name ascending (tie-break id)', schema: AccountListItem.array() }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) =>
      accounts.listAccounts(sql, orgOf(auth), {
        limit: Math.min(query.limit, ACCOUNT_LIST_MAX),
        offset: query.offset,
        search: query.search,
      }),
  });

  routes.add({
    method: 'post',
    path: '/accounts',
    tag: 'CRM',
    summary: 'Create an account',
    auth: { scope: 'crmManage' },
    body: CreateAccountBody,
    responses: { 200: { description: 'The new account', schema: Account }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => {
      const row = await accounts.insertAccount(sql, orgOf(auth), {
        name: body.name,
        domain: body.domain ?? null,
        industry: body.industry ?? null,
        website: body.website ?? null,
        description: body.description ?? null,
        owner_id: body.owner_id ?? null,
        employee_count: body.employee_count ?? null,
        tags: uniqueTags(body.tags ?? []),
      });
      return reply(200, accountView(row));
    },
  });

  routes.add({
    method: 'get',
    path: '/accounts/{account_id}',
    tag: 'CRM',
    summary: 'One account, full row',
    auth: { scope: 'crmRead' },
    params: AccountParams,
    responses: { 200: { description: 'The account', schema: Account }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const row = await accounts.getAccount(sql, orgOf(auth), params.account_id);
      if (!row) throw accountNotFound();
      return accountView(row);
    },
  });

  routes.add({
    method: 'patch',
    path: '/accounts/{account_id}',
    tag: 'CRM',
    summary: 'Update an account: only the fields sent change; null clears',
    auth: { scope: 'crmManage' },
    params: AccountParams,
    body: UpdateAccountBody,
    responses: {
      200: { description: 'The updated account', schema: Account },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('No fields to update');
      const patch = body.tags ? { ...body, tags: uniqueTags(body.tags) } : body;
      const row = await accounts.updateAccount(sql, orgOf(auth), params.account_id, patch);
      if (!row) throw accountNotFound();
      return accountView(row);
    },
  });

  routes.add({
    method: 'delete',
    path: '/accounts/{account_id}',
    tag: 'CRM',
    summary: "Delete an account; its contacts', deals' and activities' account_id becomes null",
    auth: { scope: 'crmManage' },
    params: AccountParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      if (!(await accounts.deleteAccount(sql, orgOf(auth), params.account_id))) throw accountNotFound();
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/accounts/{account_id}/health/refresh',
    tag: 'CRM',
    summary: "Recompute the account's health score in a workflow",
    auth: { scope: 'crmManage' },
    params: AccountParams,
    responses: {
      202: { description: 'Started, or already running: the workflow id either way', schema: WorkflowStarted },
      ...authErrors,
      ...notFoundError,
      ...validationError,
      503: { description: 'Workflow engine unavailable', schema: ErrorBody },
    },
    handler: async ({ params, auth }) => {
      const orgId = orgOf(auth);
      if (!(await accounts.accountExists(sql, orgId, params.account_id))) throw accountNotFound();
      // USE_EXISTING: a refresh while one runs attaches to it instead of failing; a finished run's
      // id is reused for the next refresh (the default reuse policy allows it).
      const handle = await temporal.workflow.start<typeof accountHealthRefresh>('accountHealthRefresh', {
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        workflowId: accountHealthWorkflowId(params.account_id),
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ orgId, accountId: params.account_id }],
        typedSearchAttributes: organizationAttribute(orgId),
      });
      return reply(202, { workflow_id: handle.workflowId });
    },
  });

  routes.add({
    method: 'get',
    path: '/accounts/{account_id}/health',
    tag: 'CRM',
    summary: "The account's latest health score and its history, newest first",
    auth: { scope: 'crmRead' },
    params: AccountParams,
    query: HealthQuery,
    responses: { 200: { description: 'Latest score and history', schema: AccountHealth }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, query, auth }) => {
      const orgId = orgOf(auth);
      const row = await accounts.getAccount(sql, orgId, params.account_id);
      if (!row) throw accountNotFound();
      const history = await accounts.healthHistory(sql, orgId, row.id, Math.min(query.limit, HEALTH_HISTORY_MAX));
      return {
        account_id: row.id,
        health_score: row.health_score,
        computed_at: history[0]?.computed_at.toISOString() ?? null,
        history: history.map(healthEntry),
      };
    },
  });
}
