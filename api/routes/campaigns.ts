import { CAMPAIGN_MOVES, type CampaignMove } from '../../domain/campaigns';
import { acceptCallEvent, assertCallEventSigned } from '../../services/campaigns/call-events';
import { createCampaign, getCampaign, listCampaigns } from '../../services/campaigns/campaigns';
import { getConcurrencySettings, putConcurrencySettings } from '../../services/campaigns/concurrency';
import { addContacts, listCampaignContacts } from '../../services/campaigns/contacts';
import { moveCampaign } from '../../services/campaigns/lifecycle';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, workflowUnavailable } from '../schemas/common';
import {
  AddContactsBody,
  CallEventAccepted,
  CallEventBody,
  CallEventHeaders,
  Campaign,
  CampaignDetail,
  CampaignIdParams,
  CampaignList,
  CampaignListQuery,
  ConcurrencySettings,
  ConcurrencySettingsBody,
  ContactList,
  ContactListQuery,
  ContactsAdded,
  CreateCampaignBody,
} from '../schemas/campaigns';

// Campaigns need an active organization; reads take a CRM read scope and writes a CRM manage scope
// (api:manage is the API-wide one), see docs/decisions/campaigns.md.
const READ: AuthRule = { scope: 'crmRead' };
const MANAGE: AuthRule = { scope: 'crmManage' };
const TAG = 'Campaigns';
const conflictError = { 409: { description: 'The campaign is not in a state that allows this', schema: ErrorBody } } as const;

export function registerCampaignRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/campaign/campaigns',
    tag: TAG,
    summary: 'Create a campaign with its contacts; its workflow starts paused, right after the answer',
    auth: MANAGE,
    body: CreateCampaignBody,
    responses: {
      200: { description: 'Created, paused', schema: Campaign },
      ...authErrors,
      404: { description: 'An agent is not in the organization', schema: ErrorBody },
      409: { description: 'external_id already used in the organization', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await createCampaign(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/campaign/campaigns',
    tag: TAG,
    summary: "List the organization's campaigns, newest first",
    auth: READ,
    query: CampaignListQuery,
    responses: {
      200: { description: 'One page', schema: CampaignList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => listCampaigns(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/campaign/campaigns/{id}',
    tag: TAG,
    summary: 'A campaign with its contacts counted per state',
    auth: READ,
    params: CampaignIdParams,
    responses: { 200: { description: 'The campaign', schema: CampaignDetail }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => getCampaign(deps, orgOf(auth), params.id),
  });

  routes.add({
    method: 'get',
    path: '/campaign/campaigns/{id}/contacts',
    tag: TAG,
    summary: "A campaign's contacts with their state and attempts, in the order added",
    auth: READ,
    params: CampaignIdParams,
    query: ContactListQuery,
    responses: {
      200: { description: 'One page', schema: ContactList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, query, auth }) => listCampaignContacts(deps, orgOf(auth), params.id, query),
  });

  routes.add({
    method: 'post',
    path: '/campaign/campaigns/{id}/contacts',
    tag: TAG,
    summary: 'Add contacts to a paused or active campaign',
    auth: MANAGE,
    params: CampaignIdParams,
    body: AddContactsBody,
    responses: {
      200: { description: 'Added', schema: ContactsAdded },
      ...authErrors,
      404: { description: 'Campaign or agent not found', schema: ErrorBody },
      ...conflictError,
      ...validationError,
      ...workflowUnavailable,
    },
    handler: async ({ params, body, auth }) => reply(200, await addContacts(deps, orgOf(auth), params.id, body)),
  });

  for (const move of Object.keys(CAMPAIGN_MOVES) as CampaignMove[]) {
    const { from, to } = CAMPAIGN_MOVES[move];
    routes.add({
      method: 'post',
      path: `/campaign/campaigns/{id}/${move}`,
      tag: TAG,
      summary: `${move[0]!.toUpperCase()}${move.slice(1)} a campaign (${from.join(' or ')} → ${to})`,
      auth: MANAGE,
      params: CampaignIdParams,
      responses: {
        200: { description: 'The campaign after the move', schema: Campaign },
        ...authErrors,
        ...notFoundError,
        ...conflictError,
        ...validationError,
        ...workflowUnavailable,
      },
      handler: async ({ params, auth }) => moveCampaign(deps, orgOf(auth), params.id, move, actor(auth)),
    });
  }

  routes.add({
    method: 'get',
    path: '/campaign/concurrency-settings',
    tag: TAG,
    summary: "The organization's call concurrency limit, its pacing (calls started per second) and the calls in flight",
    auth: READ,
    responses: { 200: { description: 'Settings (the default when never set)', schema: ConcurrencySettings }, ...authErrors },
    handler: async ({ auth }) => getConcurrencySettings(deps, orgOf(auth)),
  });

  routes.add({
    method: 'put',
    path: '/campaign/concurrency-settings',
    tag: TAG,
    summary: "Create or update the organization's call concurrency limit and pacing (omitted pacing fields stay as they are)",
    auth: MANAGE,
    body: ConcurrencySettingsBody,
    responses: { 200: { description: 'Settings', schema: ConcurrencySettings }, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => putConcurrencySettings(deps, orgOf(auth), actor(auth), body),
  });

  routes.add({
    method: 'post',
    path: '/campaign/call-events',
    tag: TAG,
    summary: 'Report the progress or outcome of a campaign call (telephony or voice runtime callback)',
    auth: 'public',
    headers: CallEventHeaders,
    // Without a signature of the right shape the body is never read.
    beforeBody: (ctx) => assertCallEventSigned(deps, ctx.get('x-dialer-signature')),
    body: CallEventBody,
    responses: {
      202: { description: 'Handed to the organization dispatcher', schema: CallEventAccepted },
      401: { description: 'Missing or invalid X-Dialer-Signature', schema: ErrorBody },
      404: { description: 'No campaign call has this idempotency key', schema: ErrorBody },
      ...validationError,
      503: { description: 'Callbacks not configured, or workflow engine unavailable', schema: ErrorBody },
    },
    handler: async ({ body, ctx }) => {
      const rawBody = (ctx.request as unknown as { rawBody?: string }).rawBody ?? '';
      return reply(202, await acceptCallEvent(deps, body, { rawBody, signature: ctx.get('x-dialer-signature') }));
    },
  });
}
