import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { z } from 'zod';
import * as contacts from '../../db/campaign-contacts';
import * as campaigns from '../../db/campaigns';
import type { CampaignRow } from '../../db/campaigns';
import { signalDispatcher } from '../../platform/campaign-dispatcher';
import { verifySignature } from '../../platform/dialer';
import { newId } from '../../platform/ids';
import { organizationAttribute } from '../../platform/temporal';
import {
  CAMPAIGN_MOVES,
  MOVE_UPDATES,
  campaignWorkflowId,
  dispatcherWorkflowId,
  wakeDispatcherSignal,
  type CampaignMove,
  type CampaignWorkflowInput,
} from '../../workflows/campaign-messages';
import type { campaignWorkflow } from '../../workflows/campaigns';
import { actor, orgOf, type AuthRule, type RequestAuth } from '../auth/context';
import type { AppDeps } from '../deps';
import { HttpError, ValidationError, conflict, notFound, unavailable } from '../errors';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, iso } from '../schemas/common';
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
// (api:manage is the API-wide one), see docs/decisions.md.
const READ: AuthRule = { scope: 'crmRead' };
const MANAGE: AuthRule = { scope: 'crmManage' };
const TAG = 'Campaigns';
const conflictError = { 409: { description: 'The campaign is not in a state that allows this', schema: ErrorBody } } as const;
const unavailableError = { 503: { description: 'Workflow engine unavailable; nothing was written', schema: ErrorBody } } as const;

/** How long a move waits for the campaign's workflow to apply it. */
const MOVE_DEADLINE_MS = 30_000;


function campaignView(row: CampaignRow): z.output<typeof Campaign> {
  return {
    id: row.id,
    external_id: row.external_id,
    organization_id: row.org_id,
    name: row.name,
    status: row.status,
    configuration_id: row.configuration_id,
    agent_number: row.agent_number,
    priority: row.priority,
    agent_id: row.agent_id,
    version: row.version,
    timezone: row.timezone,
    calling_window: row.calling_window,
    max_attempts: row.max_attempts,
    retry_backoff_seconds: row.retry_backoff_seconds,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
    closed_at: iso(row.closed_at),
  };
}

function contactView(row: contacts.ContactRow) {
  return {
    id: row.id,
    campaign_id: row.campaign_id,
    external_id: row.external_id,
    phone_numbers: row.phone_numbers,
    timezone: row.timezone,
    scheduled_at: iso(row.scheduled_at),
    agent_id: row.agent_id,
    agent_number: row.agent_number,
    agent_version: row.agent_version,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: iso(row.next_attempt_at),
    last_outcome: row.last_outcome,
    data: row.data,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === '23505';

export function registerCampaignRoutes(routes: Routes, deps: AppDeps): void {
  const { sql, temporal, config } = deps;

  async function campaignOf(id: string, auth: RequestAuth): Promise<CampaignRow> {
    const row = await campaigns.findCampaign(sql, id, orgOf(auth));
    if (!row) throw notFound('Campaign not found');
    return row;
  }

  /** Every agent the calls would use must exist in the organization. */
  async function assertAgents(orgId: string, ids: (string | undefined | null)[]): Promise<void> {
    const wanted = [...new Set(ids.filter((id): id is string => !!id))];
    const missing = await campaigns.missingAgents(sql, orgId, wanted);
    if (missing.length) throw notFound(`Agent not found: ${missing[0]}`);
  }

  routes.add({
    method: 'post',
    path: '/campaign/campaigns',
    tag: TAG,
    summary: 'Create a campaign with its contacts; its workflow starts paused',
    auth: MANAGE,
    body: CreateCampaignBody,
    responses: {
      200: { description: 'Created, paused', schema: Campaign },
      ...authErrors,
      404: { description: 'An agent is not in the organization', schema: ErrorBody },
      409: { description: 'external_id already used in the organization', schema: ErrorBody },
      ...validationError,
      ...unavailableError,
    },
    handler: async ({ body, auth, ctx }) => {
      const orgId = orgOf(auth);
      await assertAgents(orgId, [body.agent_id, ...body.contacts.map((c) => c.agent_id)]);
      const id = newId();
      // Row, contacts and workflow start in one transaction: a failed start rolls everything back.
      // The campaign's advisory lock is taken first; the inserts and the start then overlap, since the
      // workflow's first activity waits for this transaction to end (and ends quietly on a rollback).
      const row = await sql.begin(async (tx) => {
        await campaigns.lockCampaign(tx, id);
        const store = async () => {
          const inserted = await campaigns
            .insertCampaign(tx, {
              id,
              org_id: orgId,
              external_id: body.external_id ?? null,
              name: body.name,
              configuration_id: body.configuration_id ?? null,
              agent_number: body.agent_number ?? null,
              priority: body.priority,
              agent_id: body.agent_id ?? null,
              version: body.version ?? null,
              timezone: body.timezone,
              calling_window: body.calling_window,
              max_attempts: body.max_attempts,
              retry_backoff_seconds: body.retry_backoff_seconds,
              created_by: actor(auth),
            })
            .catch((error: unknown) => {
              throw isUniqueViolation(error) ? conflict('A campaign with this external_id already exists') : error;
            });
          await contacts.insertContacts(tx, orgId, id, body.contacts);
          return inserted;
        };
        const [inserted] = await Promise.all([
          store(),
          temporal.workflow.start<typeof campaignWorkflow>('campaignWorkflow', {
            workflowId: campaignWorkflowId(id),
            taskQueue: config.TEMPORAL_TASK_QUEUE,
            args: [{ campaignId: id, orgId } satisfies CampaignWorkflowInput],
            typedSearchAttributes: organizationAttribute(orgId),
          }),
        ]);
        return inserted;
      });
      ctx.state.log.info({ campaignId: id, contacts: body.contacts.length }, 'campaign created');
      return reply(200, campaignView(row));
    },
  });

  routes.add({
    method: 'get',
    path: '/campaign/campaigns',
    tag: TAG,
    summary: "List the organization's campaigns, newest first",
    auth: READ,
    query: CampaignListQuery,
    responses: { 200: { description: 'One page', schema: CampaignList }, 400: { description: 'Invalid cursor', schema: ErrorBody }, ...authErrors, ...validationError },
    handler: async ({ query, auth }) => {
      const orgId = orgOf(auth);
      const after = decodeCursor(query.cursor, CreatedCursor);
      const [rows, total] = await Promise.all([
        campaigns.listCampaigns(sql, orgId, { status: query.status, limit: query.limit, after }),
        campaigns.countCampaigns(sql, orgId, query.status),
      ]);
      const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
      return { data: page.data.map(campaignView), pagination: page.pagination };
    },
  });

  routes.add({
    method: 'get',
    path: '/campaign/campaigns/{id}',
    tag: TAG,
    summary: 'A campaign with its contacts counted per state',
    auth: READ,
    params: CampaignIdParams,
    responses: { 200: { description: 'The campaign', schema: CampaignDetail }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const row = await campaignOf(params.id, auth);
      return { ...campaignView(row), progress: await contacts.progressOf(sql, row.id) };
    },
  });

  routes.add({
    method: 'get',
    path: '/campaign/campaigns/{id}/contacts',
    tag: TAG,
    summary: "A campaign's contacts with their state and attempts, in the order added",
    auth: READ,
    params: CampaignIdParams,
    query: ContactListQuery,
    responses: { 200: { description: 'One page', schema: ContactList }, 400: { description: 'Invalid cursor', schema: ErrorBody }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, query, auth }) => {
      const row = await campaignOf(params.id, auth);
      const after = decodeCursor(query.cursor, CreatedCursor);
      const [rows, total] = await Promise.all([
        contacts.listContacts(sql, row.id, { status: query.status, limit: query.limit, after }),
        contacts.countContacts(sql, row.id, query.status),
      ]);
      const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
      return { data: page.data.map(contactView), pagination: page.pagination };
    },
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
      ...unavailableError,
    },
    handler: async ({ params, body, auth }) => {
      const orgId = orgOf(auth);
      const current = await campaignOf(params.id, auth);
      if (!current.agent_id) {
        const issues = body.contacts.flatMap((c, i) =>
          c.agent_id
            ? []
            : [{ type: 'value_error', loc: ['body', 'contacts', i, 'agent_id'], msg: 'agent_id is required on the contact when the campaign has none', input: null, ctx: {} }],
        );
        if (issues.length) throw new ValidationError(issues);
      }
      await assertAgents(orgId, body.contacts.map((c) => c.agent_id));
      await sql.begin(async (tx) => {
        // Shared dispatch lock: the dispatcher's next claim waits for these rows; the row lock
        // orders this against a concurrent cancel.
        await campaigns.lockDispatch(tx, orgId, 'shared');
        const row = await campaigns.findCampaignForUpdate(tx, params.id, orgId);
        if (!row) throw notFound('Campaign not found');
        if (row.status === 'completed' || row.status === 'canceled') throw conflict(`Cannot add contacts to a campaign that is ${row.status}`);
        await contacts.insertContacts(tx, orgId, row.id, body.contacts);
        if (row.status === 'active') await signalDispatcher(temporal, config, orgId);
      });
      return reply(200, { campaign_id: params.id, added: body.contacts.length, progress: await contacts.progressOf(sql, params.id) });
    },
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
      responses: { 200: { description: 'The campaign after the move', schema: Campaign }, ...authErrors, ...notFoundError, ...conflictError, ...validationError, ...unavailableError },
      handler: async ({ params, auth }) => {
        const row = await campaignOf(params.id, auth);
        if (!from.includes(row.status)) throw conflict(`Cannot ${move} a campaign that is ${row.status}`);
        try {
          // Bounded: with no worker polling, the caller gets a 503 instead of waiting indefinitely.
          await temporal.connection.withDeadline(Date.now() + MOVE_DEADLINE_MS, () =>
            temporal.workflow.getHandle(campaignWorkflowId(row.id)).executeUpdate(MOVE_UPDATES[move], { args: [{ actor: actor(auth) }] }),
          );
        } catch (error) {
          if (error instanceof WorkflowUpdateFailedError) throw conflict(error.cause?.message ?? `Cannot ${move} this campaign`);
          if (error instanceof WorkflowNotFoundError) throw conflict('The campaign workflow is no longer running');
          throw error;
        }
        return campaignView(await campaignOf(params.id, auth));
      },
    });
  }

  async function settingsView(orgId: string) {
    const [row, active] = await Promise.all([campaigns.findConcurrencySettings(sql, orgId), contacts.inFlightCount(sql, orgId)]);
    return {
      organization_id: orgId,
      concurrency_limit: row?.concurrency_limit ?? config.CAMPAIGN_DEFAULT_CONCURRENCY,
      active,
      created_at: iso(row?.created_at ?? null),
      updated_at: iso(row?.updated_at ?? null),
      created_by: row?.created_by ?? null,
      modified_by: row?.modified_by ?? null,
    };
  }

  routes.add({
    method: 'get',
    path: '/campaign/concurrency-settings',
    tag: TAG,
    summary: "The organization's call concurrency limit and the calls in flight",
    auth: READ,
    responses: { 200: { description: 'Settings (the default when never set)', schema: ConcurrencySettings }, ...authErrors },
    handler: async ({ auth }) => settingsView(orgOf(auth)),
  });

  routes.add({
    method: 'put',
    path: '/campaign/concurrency-settings',
    tag: TAG,
    summary: "Create or update the organization's call concurrency limit",
    auth: MANAGE,
    body: ConcurrencySettingsBody,
    responses: { 200: { description: 'Settings', schema: ConcurrencySettings }, ...authErrors, ...validationError },
    handler: async ({ body, auth, ctx }) => {
      const orgId = orgOf(auth);
      await campaigns.upsertConcurrencySettings(sql, orgId, body.concurrency_limit, actor(auth));
      // Best effort: a running dispatcher re-reads the limit on its next cycle anyway.
      await temporal.workflow
        .getHandle(dispatcherWorkflowId(orgId))
        .signal(wakeDispatcherSignal)
        .catch((err: unknown) => ctx.state.log.debug({ err }, 'no dispatcher to wake'));
      return settingsView(orgId);
    },
  });

  routes.add({
    method: 'post',
    path: '/campaign/call-events',
    tag: TAG,
    summary: 'Report the progress or outcome of a campaign call (telephony or voice runtime callback)',
    auth: 'public',
    headers: CallEventHeaders,
    body: CallEventBody,
    responses: {
      202: { description: 'Handed to the organization dispatcher', schema: CallEventAccepted },
      401: { description: 'Missing or invalid X-Dialer-Signature', schema: ErrorBody },
      404: { description: 'No campaign call has this idempotency key', schema: ErrorBody },
      ...validationError,
      503: { description: 'Callbacks not configured, or workflow engine unavailable', schema: ErrorBody },
    },
    handler: async ({ body, ctx }) => {
      const secret = config.DIALER_CALLBACK_SECRET;
      if (!secret) throw unavailable('Call events are not configured in this deployment');
      const rawBody = (ctx.request as unknown as { rawBody?: string }).rawBody ?? '';
      if (!verifySignature(secret, rawBody, ctx.get('x-dialer-signature'))) throw new HttpError(401, 'Invalid signature');
      const orgId = await contacts.conversationOrg(sql, body.idempotency_key);
      if (!orgId) throw notFound('Call not found');
      await signalDispatcher(temporal, config, orgId, [body]);
      return reply(202, { status: 'accepted' });
    },
  });
}
