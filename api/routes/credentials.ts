import * as credentials from '../../services/credentials/crud';
import { triggerRefresh } from '../../services/credentials/refresh';
import { listRefresherViews } from '../../services/credentials/refreshers';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { badRequest } from '../errors';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  CreateCredentialBody,
  Credential,
  CredentialList,
  CredentialListQuery,
  CredentialParams,
  PatchCredentialBody,
  PutValueBody,
  RefreshStarted,
  RefresherList,
} from '../schemas/credentials';

// Credentials take the CRM scope groups (workflows:read / workflows:manage belong to them), like campaigns.
const READ: AuthRule = { scope: 'crmRead' };
const MANAGE: AuthRule = { scope: 'crmManage' };
const TAG = 'Workflow Credentials';
const unavailable = { 503: { description: 'Workflow engine unavailable; nothing was changed', schema: ErrorBody } } as const;
/** What create and patch may refuse with, besides the 200. */
const writeErrors = {
  400: {
    description: 'Refresh fields that do not fit together (refresher, refresh_input, refresh_policy), or an empty body',
    schema: ErrorBody,
  },
  ...authErrors,
  404: { description: 'Credential, or the named refresher, not found in the organization', schema: ErrorBody },
  409: { description: 'The organization already has a credential of that name', schema: ErrorBody },
  ...validationError,
  ...unavailable,
} as const;

export function registerCredentialRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/workflow/credentials',
    tag: TAG,
    summary: 'List credentials, newest first (metadata only)',
    auth: READ,
    query: CredentialListQuery,
    responses: {
      200: { description: 'One page and the total matching', schema: CredentialList },
      400: { description: 'Unknown filter or invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => credentials.listCredentials(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/workflow/credential-refreshers',
    tag: TAG,
    summary: 'The refreshers a credential may name in refresher_workflow_id',
    auth: READ,
    responses: { 200: { description: 'Built-in refreshers', schema: RefresherList }, ...authErrors },
    handler: async () => listRefresherViews(),
  });

  routes.add({
    method: 'post',
    path: '/workflow/credentials',
    tag: TAG,
    summary: 'Create a credential; a refresh policy other than manual creates its Temporal Schedule',
    auth: MANAGE,
    body: CreateCredentialBody,
    responses: {
      200: { description: 'Created (the value is never returned)', schema: Credential },
      ...writeErrors,
    },
    handler: async ({ body, auth }) => reply(200, await credentials.createCredential(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/workflow/credentials/{credential_id}',
    tag: TAG,
    summary: 'One credential (metadata only)',
    auth: READ,
    params: CredentialParams,
    responses: { 200: { description: 'The credential', schema: Credential }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => credentials.getCredential(deps, orgOf(auth), params.credential_id),
  });

  routes.add({
    method: 'patch',
    path: '/workflow/credentials/{credential_id}',
    tag: TAG,
    summary: 'Change name, description, refresher, refresh input or policy; the schedule follows the policy',
    auth: MANAGE,
    params: CredentialParams,
    body: PatchCredentialBody,
    responses: {
      200: { description: 'The updated credential', schema: Credential },
      ...writeErrors,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('Empty patch body: send at least one field');
      return credentials.updateCredential(deps, orgOf(auth), actor(auth), params.credential_id, body);
    },
  });

  routes.add({
    method: 'delete',
    path: '/workflow/credentials/{credential_id}',
    tag: TAG,
    summary: 'Delete a credential, its value and its schedule',
    auth: MANAGE,
    params: CredentialParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError, ...unavailable },
    handler: async ({ params, auth }) => {
      await credentials.deleteCredential(deps, orgOf(auth), params.credential_id);
      return reply(204);
    },
  });

  routes.add({
    method: 'put',
    path: '/workflow/credentials/{credential_id}/value',
    tag: TAG,
    summary: 'Set the value of a credential without a refresher (write-only)',
    auth: MANAGE,
    params: CredentialParams,
    body: PutValueBody,
    responses: {
      200: { description: 'The credential, with has_value, value_keys and secrets after the write', schema: Credential },
      ...authErrors,
      ...notFoundError,
      409: { description: 'The credential has a refresher', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, body, auth }) =>
      credentials.putCredentialValue(deps, orgOf(auth), actor(auth), params.credential_id, body.value, body.expires_at ?? null),
  });

  routes.add({
    method: 'post',
    path: '/workflow/credentials/{credential_id}/refresh',
    tag: TAG,
    summary: 'Refresh now (the credential-refresh workflow); a refresh already running is returned instead',
    auth: MANAGE,
    params: CredentialParams,
    responses: {
      202: { description: 'Started, or already running: its execution id', schema: RefreshStarted },
      ...authErrors,
      ...notFoundError,
      409: { description: 'The credential has no refresher', schema: ErrorBody },
      ...validationError,
      ...unavailable,
    },
    handler: async ({ params, auth }) => reply(202, await triggerRefresh(deps, orgOf(auth), params.credential_id)),
  });
}
