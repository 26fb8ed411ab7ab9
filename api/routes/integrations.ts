import { z } from 'zod';
import { PAGE_HEADERS } from '../../domain/integrations';
import * as catalog from '../../services/integrations/catalog';
import * as connect from '../../services/integrations/connect';
import type { Page } from '../../services/integrations/connect';
import * as connections from '../../services/integrations/connections';
import * as telephony from '../../services/integrations/telephony-accounts';
import { actingUser, actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  AuthorizeQuery,
  CallbackQuery,
  ConnectPageParams,
  ConnectToken,
  Connection,
  ConnectionList,
  ConnectionParams,
  ConnectionQuery,
  CreateConnectTokenBody,
  IntegrationList,
  IntegrationSettings,
  PutIntegrationSettingsBody,
  TelephonyAccountBody,
} from '../schemas/integrations';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const html = (description: string) => ({ description, schema: z.string(), contentType: 'text/html' });
const unknownLink = html('Unknown connect link (or unknown state): an HTML error page');
const spentLink = html('Connect link already used or expired: an HTML error page');
const location = { Location: { description: 'Where the browser goes next', schema: { type: 'string' as const } } };

/** An HTML page or a redirect, as the service decided; never a JSON body or a stack trace. */
const answer = <S extends number>(result: Page<S> | { kind: 'redirect'; location: string }) =>
  result.kind === 'redirect'
    ? reply(302, undefined, { ...PAGE_HEADERS, Location: result.location })
    : reply(result.status, result.html, PAGE_HEADERS, 'text/html; charset=utf-8');

export function registerIntegrationRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/integrations',
    tag: 'Integrations',
    summary: "The deployment's catalog of OAuth 2.0 integrations, with the scopes each asks for and what they grant",
    auth: { scope: 'crmRead' },
    responses: { 200: { description: 'Integrations', schema: IntegrationList }, ...authErrors },
    handler: async () => catalog.listIntegrations(deps),
  });

  routes.add({
    method: 'get',
    path: '/integrations/settings',
    tag: 'Integrations',
    summary: "Origins the organization's connect tokens may send the browser back to",
    auth: { scope: 'crmRead' },
    responses: {
      200: { description: "The allowlist (default: the service's own public origin)", schema: IntegrationSettings },
      ...authErrors,
    },
    handler: async ({ auth }) => catalog.getSettings(deps, orgOf(auth)),
  });

  routes.add({
    method: 'put',
    path: '/integrations/settings',
    tag: 'Integrations',
    summary: "Replace the organization's allowlist of redirect origins",
    auth: { scope: 'crmManage' },
    body: PutIntegrationSettingsBody,
    responses: { 200: { description: 'The allowlist', schema: IntegrationSettings }, ...authErrors, ...validationError },
    handler: async ({ auth, body }) => catalog.putSettings(deps, orgOf(auth), actor(auth), body.allowed_redirect_origins),
  });

  routes.add({
    method: 'post',
    path: '/integrations/connect-tokens',
    tag: 'Integrations',
    summary: 'Mint a short-lived, single-use connect token and its connect page URL',
    auth: { scope: 'crmManage' },
    body: CreateConnectTokenBody,
    responses: {
      200: { description: 'The token (shown once) and its unauthenticated connect_url', schema: ConnectToken },
      400: { description: 'Unknown integration, an organization client missing, or a redirect URL off the allowlist', schema: ErrorBody },
      404: { description: 'connection_id is not a connection of the organization', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, body }) =>
      connect.createConnectToken(deps, orgOf(auth), { actor: actor(auth), userId: actingUser(auth) }, body),
  });

  routes.add({
    method: 'get',
    path: '/integrations/connect/{token}',
    tag: 'Integrations',
    summary: 'The connect page (unauthenticated: the token is the credential)',
    auth: 'public',
    params: ConnectPageParams,
    responses: {
      200: html('The page: each integration the token allows, with a button that starts its consent'),
      400: html('Nothing left to connect'),
      404: unknownLink,
      410: spentLink,
    },
    handler: async ({ params }) => answer(await connect.connectPage(deps, params.token)),
  });

  routes.add({
    method: 'get',
    path: '/integrations/connect/{token}/authorize',
    tag: 'Integrations',
    summary: "Spend the token and go to the provider's consent (authorization code with PKCE and state)",
    auth: 'public',
    params: ConnectPageParams,
    query: AuthorizeQuery,
    responses: {
      302: { description: "To the provider's authorization endpoint", headers: location },
      400: html('Integration not offered by this token'),
      404: unknownLink,
      410: spentLink,
    },
    handler: async ({ params, query }) => answer(await connect.startConsent(deps, params.token, query.integration)),
  });

  routes.add({
    method: 'get',
    path: connect.CALLBACK_PATH,
    tag: 'Integrations',
    summary: "The provider's redirect: exchanges the code, stores the connection, then goes to success_url or error_url",
    auth: 'public',
    query: CallbackQuery,
    responses: {
      302: { description: 'To success_url (connection_id, integration) or error_url (error, error_description)', headers: location },
      400: html('No state'),
      404: unknownLink,
      410: spentLink,
    },
    handler: async ({ query }) => answer(await connect.finishConsent(deps, query as Record<string, string | undefined>)),
  });

  routes.add({
    method: 'get',
    path: '/integrations/connections',
    tag: 'Integrations',
    summary: "The organization's connected accounts, newest first",
    auth: { scope: 'crmRead' },
    query: ConnectionQuery,
    responses: {
      200: { description: 'A page of connections', schema: ConnectionList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, query }) => connections.listConnections(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/integrations/connections/{connection_id}',
    tag: 'Integrations',
    summary: 'One connected account',
    auth: { scope: 'crmRead' },
    params: ConnectionParams,
    responses: { 200: { description: 'The connection', schema: Connection }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ auth, params }) => connections.getConnection(deps, orgOf(auth), params.connection_id),
  });

  routes.add({
    method: 'delete',
    path: '/integrations/connections/{connection_id}',
    tag: 'Integrations',
    summary: 'Revoke a connection: at the provider where it can, then its credential and schedule; the connection stays as revoked',
    auth: { scope: 'crmManage' },
    params: ConnectionParams,
    responses: {
      204: { description: 'Revoked (also when it already was)' },
      503: {
        description:
          'Workflow engine unavailable (the refresh schedule could not be deleted): the connection is not yet revoked here (its tokens may already be revoked at the provider); retry',
        schema: ErrorBody,
      },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ auth, params }) => {
      await connections.deleteConnection(deps, orgOf(auth), params.connection_id);
      return reply(204);
    },
  });

  const providerErrors = {
    400: {
      description: 'The provider refused the keys (or the Vapi phone number is not of the account); nothing is stored',
      schema: ErrorBody,
    },
    502: { description: 'The provider failed or did not answer within DIALER_PROVIDER_TIMEOUT_MS; nothing is stored', schema: ErrorBody },
  };

  routes.add({
    method: 'post',
    path: '/integrations/telephony-accounts',
    tag: 'Integrations',
    summary:
      "Connect the organization's telephony account (Twilio or Vapi) with its API keys: its campaigns, number imports and SIP endpoints then go through it",
    auth: { scope: 'crmManage' },
    body: TelephonyAccountBody,
    responses: {
      200: { description: 'The connection (kind api_key; the keys are sealed in its credential and never returned)', schema: Connection },
      ...providerErrors,
      409: { description: 'The organization already has a telephony account that is not revoked', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, body }) => telephony.connectTelephonyAccount(deps, orgOf(auth), actor(auth), body),
  });

  routes.add({
    method: 'put',
    path: '/integrations/telephony-accounts/{connection_id}',
    tag: 'Integrations',
    summary: 'Put new keys on the telephony account (a rotated token, or a reconnect after the provider refused the old ones)',
    auth: { scope: 'crmManage' },
    params: ConnectionParams,
    body: TelephonyAccountBody,
    responses: {
      200: { description: 'The connection, active again', schema: Connection },
      ...providerErrors,
      404: { description: 'Not a telephony account of the organization', schema: ErrorBody },
      409: { description: 'Revoked, of another provider, or the keys open another account', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, params, body }) => telephony.putTelephonyKeys(deps, orgOf(auth), actor(auth), params.connection_id, body),
  });
}
