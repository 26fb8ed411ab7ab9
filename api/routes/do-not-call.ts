import { addDoNotCall, getDoNotCall, listDoNotCall, removeDoNotCall } from '../../services/campaigns/do-not-call';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, validationError } from '../schemas/common';
import {
  DoNotCallAdded,
  DoNotCallCreateBody,
  DoNotCallEntry,
  DoNotCallList,
  DoNotCallListQuery,
  DoNotCallParams,
} from '../schemas/do-not-call';

// The organization's do-not-call list, read by the campaign dispatcher before every call; scopes as the
// campaigns' (a CRM read scope to list, a CRM manage scope to change), see docs/decisions/telephony.md.
const READ: AuthRule = { scope: 'crmRead' };
const MANAGE: AuthRule = { scope: 'crmManage' };
const TAG = 'Campaigns';
const notListed = { 404: { description: 'The number is not on the organization’s list', schema: ErrorBody } } as const;

export function registerDoNotCallRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/core/do-not-call',
    tag: TAG,
    summary: "The organization's do-not-call list, in number order",
    auth: READ,
    query: DoNotCallListQuery,
    responses: {
      200: { description: 'One page', schema: DoNotCallList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => listDoNotCall(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'post',
    path: '/core/do-not-call',
    tag: TAG,
    summary: 'List a number: no campaign dials it again, and pending campaign contacts that carry it are canceled',
    auth: MANAGE,
    body: DoNotCallCreateBody,
    responses: {
      200: { description: 'Listed', schema: DoNotCallAdded },
      ...authErrors,
      409: { description: 'Already on the list', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await addDoNotCall(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/core/do-not-call/{number}',
    tag: TAG,
    summary: 'One listed number',
    auth: READ,
    params: DoNotCallParams,
    responses: { 200: { description: 'Listed', schema: DoNotCallEntry }, ...authErrors, ...notListed, ...validationError },
    handler: async ({ params, auth }) => getDoNotCall(deps, orgOf(auth), params.number),
  });

  routes.add({
    method: 'delete',
    path: '/core/do-not-call/{number}',
    tag: TAG,
    summary: 'Take a number off the list: campaigns may dial it again (contacts canceled when it was added stay canceled)',
    auth: MANAGE,
    params: DoNotCallParams,
    responses: { 204: { description: 'Removed' }, ...authErrors, ...notListed, ...validationError },
    handler: async ({ params, auth }) => {
      await removeDoNotCall(deps, orgOf(auth), params.number);
      return reply(204);
    },
  });
}
