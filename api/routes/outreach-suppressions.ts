import * as suppressions from '../../services/outreach/suppressions';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, validationError } from '../schemas/common';
import {
  AddSuppressionBody,
  Suppression,
  SuppressionList,
  SuppressionListQuery,
  SuppressionParams,
} from '../schemas/outreach-suppressions';

// The organization's suppression list: addresses no sequence mails again. Hard bounces and unsubscribes
// land here by themselves; people list, add and remove entries.

const READ: AuthRule = { scope: 'outreachRead' };
const MANAGE: AuthRule = { scope: 'outreachManage' };
const TAG = 'Outreach';

export function registerOutreachSuppressionRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/outreach/suppressions',
    tag: TAG,
    summary: 'The suppression list, newest first: addresses no sequence mails again',
    auth: READ,
    query: SuppressionListQuery,
    responses: {
      200: { description: 'One page and the total matching', schema: SuppressionList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => suppressions.listSuppressions(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'post',
    path: '/outreach/suppressions',
    tag: TAG,
    summary: 'Suppress an address (idempotent: an address already listed keeps its first entry)',
    auth: MANAGE,
    body: AddSuppressionBody,
    responses: { 200: { description: 'The entry', schema: Suppression }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => reply(200, await suppressions.addSuppression(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'delete',
    path: '/outreach/suppressions/{suppression_id}',
    tag: TAG,
    summary: 'Remove an address from the suppression list: sequences may mail it again',
    auth: MANAGE,
    params: SuppressionParams,
    responses: {
      204: { description: 'Removed' },
      404: { description: 'No such entry in the organization', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, auth }) => {
      await suppressions.removeSuppression(deps, orgOf(auth), params.suppression_id);
      return reply(204);
    },
  });
}
