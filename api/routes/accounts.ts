import * as accountHealth from '../../services/account-health';
import * as accounts from '../../services/accounts';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
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
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';

// Accounts: list, CRUD and health. The activity feed under /accounts/{account_id}/activities lives
// with the other activity routes in activities.ts.

const HEALTH_HISTORY_MAX = 200;

export function registerAccountRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/accounts',
    tag: 'CRM',
    summary: 'List accounts by name; bare array of list items, no total',
    auth: { scope: 'crmRead' },
    query: AccountListQuery,
    responses: {
      200: { description: 'Accounts ordered by name ascending (tie-break id)', schema: AccountListItem.array() },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) =>
      accounts.listAccounts(deps, orgOf(auth), {
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
    handler: async ({ body, auth }) => reply(200, await accounts.createAccount(deps, orgOf(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/accounts/{account_id}',
    tag: 'CRM',
    summary: 'One account, full row',
    auth: { scope: 'crmRead' },
    params: AccountParams,
    responses: { 200: { description: 'The account', schema: Account }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => accounts.getAccount(deps, orgOf(auth), params.account_id),
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
    handler: async ({ params, body, auth }) => accounts.updateAccount(deps, orgOf(auth), params.account_id, body),
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
      await accounts.deleteAccount(deps, orgOf(auth), params.account_id);
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
    handler: async ({ params, auth }) => reply(202, await accountHealth.refreshHealth(deps, orgOf(auth), params.account_id)),
  });

  routes.add({
    method: 'get',
    path: '/accounts/{account_id}/health',
    tag: 'CRM',
    summary: "The account's latest health score and its history, newest first",
    auth: { scope: 'crmRead' },
    params: AccountParams,
    query: HealthQuery,
    responses: {
      200: { description: 'Latest score and history', schema: AccountHealth },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) =>
      accountHealth.getHealth(deps, orgOf(auth), params.account_id, Math.min(query.limit, HEALTH_HISTORY_MAX)),
  });
}
