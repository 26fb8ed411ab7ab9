import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import * as contacts from '../db/campaign-contacts';
import * as campaigns from '../db/campaigns';
import type { CampaignRow } from '../db/campaigns';
import type { Db } from '../db/client';
import { membersByExternalIds } from '../db/notifications';
import { PG, isPgError } from '../db/pg-errors';
import type { CallingWindow } from '../domain/campaign-schedule';
import {
  ACCEPTS_CONTACTS,
  CAMPAIGN_MOVES,
  COMPLETION,
  moveRefusal,
  type CallEvent,
  type CampaignMove,
  type CampaignStatus,
  type ContactState,
} from '../domain/campaigns';
import { DomainError, conflict, notFound, unauthenticated, unavailable, unprocessable } from '../domain/errors';
import type { Config } from '../platform/config';
import { verifySignature } from '../platform/dialer';
import { newId } from '../platform/ids';
import { organizationAttribute } from '../platform/temporal';
import type { campaignDispatcher } from '../workflows/campaign-dispatch';
import {
  MOVE_UPDATES,
  callEventsSignal,
  campaignWorkflowId,
  dispatcherWorkflowId,
  wakeDispatcherSignal,
  type CampaignWorkflowInput,
  type DispatcherInput,
} from '../workflows/campaign-messages';
import type { campaignWorkflow } from '../workflows/campaigns';
import type { ServiceDeps } from './deps';
import { emitEvent } from './notifications';
import { CreatedCursor, cursorPage, decodeCursor } from './pagination';
import { iso } from './views';

/** How long a move waits for the campaign's workflow to apply it. */
const MOVE_DEADLINE_MS = 30_000;

export function campaignView(row: CampaignRow) {
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

// ---- the organization's dispatcher ----

type DispatcherConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'CAMPAIGN_SWEEP_INTERVAL_SECONDS' | 'CAMPAIGN_HISTORY_LIMIT'>;

export function dispatcherInput(config: DispatcherConfig, orgId: string): DispatcherInput {
  return {
    orgId,
    settings: { sweepIntervalMs: config.CAMPAIGN_SWEEP_INTERVAL_SECONDS * 1000, historyLimit: config.CAMPAIGN_HISTORY_LIMIT },
  };
}

/**
 * Hands call events (or, without events, a wake-up) to the organization's dispatcher, starting it
 * when it is not running: the signal is in its history once this returns.
 */
export async function signalDispatcher(client: Client, config: DispatcherConfig, orgId: string, events?: CallEvent[]): Promise<void> {
  const options = {
    workflowId: dispatcherWorkflowId(orgId),
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [dispatcherInput(config, orgId)] as [DispatcherInput],
    typedSearchAttributes: organizationAttribute(orgId),
  };
  if (events) {
    await client.workflow.signalWithStart<typeof campaignDispatcher, [CallEvent[]]>('campaignDispatcher', {
      ...options,
      signal: callEventsSignal,
      signalArgs: [events],
    });
  } else {
    await client.workflow.signalWithStart<typeof campaignDispatcher, []>('campaignDispatcher', {
      ...options,
      signal: wakeDispatcherSignal,
      signalArgs: [],
    });
  }
}

// ---- campaigns ----

async function campaignOf(db: Db, orgId: string, id: string): Promise<CampaignRow> {
  const row = await campaigns.findCampaign(db, orgId, id);
  if (!row) throw notFound('Campaign not found');
  return row;
}

/** Every agent the calls would use must exist in the organization. */
async function assertAgents(db: Db, orgId: string, ids: (string | undefined | null)[]): Promise<void> {
  const wanted = [...new Set(ids.filter((id): id is string => !!id))];
  const missing = await campaigns.missingAgents(db, orgId, wanted);
  if (missing.length) throw notFound(`Agent not found: ${missing[0]}`);
}

export type NewCampaignContact = contacts.NewContact;

export interface NewCampaignInput {
  name: string;
  external_id?: string | null;
  configuration_id?: string | null;
  agent_number?: string | null;
  priority: number;
  agent_id?: string | null;
  version?: number | null;
  timezone: string;
  calling_window: CallingWindow;
  max_attempts: number;
  retry_backoff_seconds: number;
  contacts: NewCampaignContact[];
}

/**
 * Row, contacts and workflow start in one transaction: a failed start rolls everything back. The
 * campaign's advisory lock is taken first; the inserts and the start then overlap, since the
 * workflow's first activity waits for this transaction to end (and ends quietly on a rollback).
 */
export async function createCampaign(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  input: NewCampaignInput,
) {
  const { sql, temporal, config } = deps;
  await assertAgents(sql, orgId, [input.agent_id, ...input.contacts.map((c) => c.agent_id)]);
  const id = newId();
  const row = await sql.begin(async (tx) => {
    await campaigns.lockCampaign(tx, orgId, id);
    const store = async () => {
      const inserted = await campaigns
        .insertCampaign(tx, orgId, {
          id,
          external_id: input.external_id ?? null,
          name: input.name,
          configuration_id: input.configuration_id ?? null,
          agent_number: input.agent_number ?? null,
          priority: input.priority,
          agent_id: input.agent_id ?? null,
          version: input.version ?? null,
          timezone: input.timezone,
          calling_window: input.calling_window,
          max_attempts: input.max_attempts,
          retry_backoff_seconds: input.retry_backoff_seconds,
          created_by: actor,
        })
        .catch((error: unknown) => {
          throw isPgError(error, PG.UNIQUE_VIOLATION) ? conflict('A campaign with this external_id already exists') : error;
        });
      await contacts.insertContacts(tx, orgId, id, input.contacts);
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
  deps.logger.info({ campaignId: id, contacts: input.contacts.length }, 'campaign created');
  return campaignView(row);
}

export async function listCampaigns(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { status?: CampaignStatus; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    campaigns.listCampaigns(deps.sql, orgId, { status: query.status, limit: query.limit, after }),
    campaigns.countCampaigns(deps.sql, orgId, query.status),
  ]);
  const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
  return { data: page.data.map(campaignView), pagination: page.pagination };
}

export async function getCampaign(deps: Pick<ServiceDeps, 'sql'>, orgId: string, campaignId: string) {
  const row = await campaignOf(deps.sql, orgId, campaignId);
  return { ...campaignView(row), progress: await contacts.progressOf(deps.sql, orgId, row.id) };
}

export async function listCampaignContacts(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  campaignId: string,
  query: { status?: ContactState; limit: number; cursor?: string },
) {
  const row = await campaignOf(deps.sql, orgId, campaignId);
  const after = decodeCursor(query.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    contacts.listContacts(deps.sql, orgId, row.id, { status: query.status, limit: query.limit, after }),
    contacts.countContacts(deps.sql, orgId, row.id, query.status),
  ]);
  const page = cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }));
  return { data: page.data.map(contactView), pagination: page.pagination };
}

/** Adds contacts to a paused or active campaign; an active one wakes the dispatcher. */
export async function addContacts(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  orgId: string,
  campaignId: string,
  input: { contacts: NewCampaignContact[] },
) {
  const { sql, temporal, config } = deps;
  const current = await campaignOf(sql, orgId, campaignId);
  if (!current.agent_id) {
    const fields = input.contacts.flatMap((c, i) =>
      c.agent_id
        ? []
        : [{ loc: ['body', 'contacts', i, 'agent_id'], msg: 'agent_id is required on the contact when the campaign has none' }],
    );
    if (fields.length) throw unprocessable(fields);
  }
  await assertAgents(
    sql,
    orgId,
    input.contacts.map((c) => c.agent_id),
  );
  await sql.begin(async (tx) => {
    // Shared dispatch lock: the dispatcher's next claim waits for these rows; the row lock orders
    // this against a concurrent cancel.
    await campaigns.lockDispatch(tx, orgId, 'shared');
    const row = await campaigns.findCampaignForUpdate(tx, orgId, campaignId);
    if (!row) throw notFound('Campaign not found');
    if (!ACCEPTS_CONTACTS.includes(row.status)) throw conflict(`Cannot add contacts to a campaign that is ${row.status}`);
    await contacts.insertContacts(tx, orgId, row.id, input.contacts);
    if (row.status === 'active') await signalDispatcher(temporal, config, orgId);
  });
  return { campaign_id: campaignId, added: input.contacts.length, progress: await contacts.progressOf(sql, orgId, campaignId) };
}

/**
 * Asks the campaign's workflow for a move (resume, pause, cancel): the workflow runs one move at a
 * time and answers with the new status or a refusal (409). Bounded: with no worker polling, the
 * caller gets a 503 instead of waiting indefinitely.
 */
export async function moveCampaign(
  deps: Pick<ServiceDeps, 'sql' | 'temporal'>,
  orgId: string,
  campaignId: string,
  move: CampaignMove,
  actor: string,
) {
  const { sql, temporal } = deps;
  const row = await campaignOf(sql, orgId, campaignId);
  const refusal = moveRefusal(move, row.status);
  if (refusal) throw conflict(refusal);
  try {
    await temporal.connection.withDeadline(Date.now() + MOVE_DEADLINE_MS, () =>
      temporal.workflow.getHandle(campaignWorkflowId(row.id)).executeUpdate(MOVE_UPDATES[move], { args: [{ actor }] }),
    );
  } catch (error) {
    if (error instanceof WorkflowUpdateFailedError) throw conflict(error.cause?.message ?? `Cannot ${move} this campaign`);
    if (error instanceof WorkflowNotFoundError) throw conflict('The campaign workflow is no longer running');
    throw error;
  }
  return campaignView(await campaignOf(sql, orgId, campaignId));
}

/**
 * Stores a move, from the campaign's workflow. The row changes only from a status the state table
 * allows for the move; resuming a campaign with no contact left completes it, canceling cancels its
 * pending contacts, and an active campaign wakes the dispatcher.
 */
export async function applyMove(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>,
  orgId: string,
  campaignId: string,
  move: CampaignMove,
  actor: string,
): Promise<CampaignStatus> {
  const { sql, config } = deps;
  const status = await sql.begin(async (tx) => {
    // Waits out a claim in progress: once a pause or cancel returns, no new call of this campaign starts.
    await campaigns.lockDispatch(tx, orgId, 'shared');
    const row = await campaigns.findCampaignForUpdate(tx, orgId, campaignId);
    if (!row) throw new DomainError('not_found', 'Campaign row is gone');
    const refusal = moveRefusal(move, row.status);
    if (refusal) throw new DomainError('conflict', refusal);
    let target = CAMPAIGN_MOVES[move];
    if (target.to === 'active' && (await contacts.countNonFinal(tx, orgId, campaignId)) === 0) target = { ...target, to: 'completed' };
    if (target.to === 'canceled') await contacts.cancelPendingContacts(tx, orgId, campaignId);
    const moved = await campaigns.setCampaignStatus(tx, orgId, campaignId, target, actor);
    if (!moved) throw new DomainError('conflict', `Cannot ${move} a campaign that is ${row.status}`);
    if (moved.status === 'completed') await emitCompleted(tx, orgId, moved);
    return moved.status;
  });
  if (status === 'active') await signalDispatcher(deps.temporal, config, orgId);
  return status;
}

/**
 * `campaign.completed` into the outbox, in the transaction that stored the status. The member who
 * created the campaign (an actor `user:<identity-provider id>`) is its recipient besides subscribers.
 */
async function emitCompleted(tx: Db, orgId: string, row: CampaignRow): Promise<void> {
  const creator = row.created_by.startsWith('user:') ? row.created_by.slice('user:'.length) : null;
  const members = creator ? await membersByExternalIds(tx, orgId, [creator]) : [];
  await emitEvent(tx, orgId, {
    event_type: 'campaign.completed',
    entity_type: 'campaign',
    entity_id: row.id,
    payload: { campaign_id: row.id, name: row.name },
    recipient_user_ids: members.map((m) => m.user_id),
  });
}

/** Completes an active campaign once none of its contacts is left to call; returns the stored status. */
export async function completeIfSettled(deps: Pick<ServiceDeps, 'sql'>, orgId: string, campaignId: string): Promise<CampaignStatus> {
  return deps.sql.begin(async (tx) => {
    const row = await campaigns.findCampaignForUpdate(tx, orgId, campaignId);
    if (!row) throw new DomainError('not_found', 'Campaign row is gone');
    if (!COMPLETION.from.includes(row.status) || (await contacts.countNonFinal(tx, orgId, campaignId)) > 0) return row.status;
    const moved = await campaigns.setCampaignStatus(tx, orgId, campaignId, COMPLETION, null);
    if (moved!.status === 'completed') await emitCompleted(tx, orgId, moved!);
    return moved!.status;
  });
}

/**
 * The campaign workflow's first step. It waits for the create transaction (which holds the
 * campaign's advisory lock while it starts the workflow) and reports the stored status, or null when
 * that transaction rolled back.
 */
export async function openCampaign(deps: Pick<ServiceDeps, 'sql'>, orgId: string, campaignId: string): Promise<CampaignStatus | null> {
  return deps.sql.begin(async (tx) => {
    await campaigns.lockCampaign(tx, orgId, campaignId);
    const row = await campaigns.findCampaign(tx, orgId, campaignId);
    return row?.status ?? null;
  });
}

// ---- concurrency settings ----

async function settingsView(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string) {
  const [row, active] = await Promise.all([campaigns.findConcurrencySettings(deps.sql, orgId), contacts.inFlightCount(deps.sql, orgId)]);
  return {
    organization_id: orgId,
    concurrency_limit: row?.concurrency_limit ?? deps.config.CAMPAIGN_DEFAULT_CONCURRENCY,
    active,
    created_at: iso(row?.created_at ?? null),
    updated_at: iso(row?.updated_at ?? null),
    created_by: row?.created_by ?? null,
    modified_by: row?.modified_by ?? null,
  };
}

export const getConcurrencySettings = (deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string) => settingsView(deps, orgId);

export async function putConcurrencySettings(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal' | 'logger'>,
  orgId: string,
  actor: string,
  input: { concurrency_limit: number },
) {
  await campaigns.upsertConcurrencySettings(deps.sql, orgId, input.concurrency_limit, actor);
  // Best effort: a running dispatcher re-reads the limit on its next cycle anyway.
  await deps.temporal.workflow
    .getHandle(dispatcherWorkflowId(orgId))
    .signal(wakeDispatcherSignal)
    .catch((err: unknown) => deps.logger.debug({ err }, 'no dispatcher to wake'));
  return settingsView(deps, orgId);
}

// ---- provider callbacks ----

/**
 * What a call event must show before its body is read: callbacks configured (503), and an
 * `X-Dialer-Signature` of the right shape (401); the signature itself is checked on the raw body.
 */
export function assertCallEventSigned(deps: Pick<ServiceDeps, 'config'>, signature: string): void {
  if (!deps.config.DIALER_CALLBACK_SECRET) throw unavailable('Call events are not configured in this deployment');
  if (!/^sha256=[0-9a-f]{64}$/.test(signature)) throw unauthenticated('Invalid signature');
}

/** A signed call event from the telephony provider, handed to its organization's dispatcher. */
export async function acceptCallEvent(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>,
  event: CallEvent,
  signed: { rawBody: string; signature: string },
) {
  const secret = deps.config.DIALER_CALLBACK_SECRET;
  if (!secret) throw unavailable('Call events are not configured in this deployment');
  if (!verifySignature(secret, signed.rawBody, signed.signature)) throw unauthenticated('Invalid signature');
  const orgId = await contacts.conversationOrg(deps.sql, event.idempotency_key);
  if (!orgId) throw notFound('Call not found');
  await signalDispatcher(deps.temporal, deps.config, orgId, [event]);
  return { status: 'accepted' as const };
}
