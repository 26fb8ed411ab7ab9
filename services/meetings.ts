import { WorkflowNotFoundError } from '@temporalio/client';
import * as meetings from '../db/meetings';
import type { BotEventRow, BotRow } from '../db/meetings';
import { conflict, invalid, notFound, unavailable } from '../domain/errors';
import { meetingPlatform, type BotStatus, type VendorEvent } from '../domain/meetings';
import { newId } from '../platform/core/ids';
import { hasSignatureHeaders, verifyWebhook, webhookSecrets } from '../platform/adapters/meetings/vendor';
import {
  botWorkflowId,
  leaveMeetingSignal,
  meetingBotWorkflowRef,
  vendorEventSignal,
  type MeetingBotInput,
} from '../workflows/meeting-messages';
import type { ServiceDeps } from './deps';
import { iso } from './views';
import { signalWorkflow, startWorkflow } from './workflow-client';
import { CreatedCursor, cursorPage, decodeCursor } from './pagination';

/** The name the vendor's bot shows in the meeting when the caller gives none. */
export const DEFAULT_BOT_NAME = 'Meeting Notetaker';

export function botView(row: BotRow) {
  const duration =
    row.recording_started_at && row.recording_ended_at
      ? Math.max(0, Math.round((row.recording_ended_at.getTime() - row.recording_started_at.getTime()) / 1000))
      : null;
  return {
    id: row.id,
    organization_id: row.org_id,
    meeting_url: row.meeting_url,
    platform: row.platform,
    bot_name: row.bot_name,
    join_at: iso(row.join_at),
    account_id: row.account_id,
    deal_id: row.deal_id,
    contact_ids: row.contact_ids,
    status: row.status,
    status_reason: row.status_reason,
    vendor: row.vendor,
    vendor_bot_id: row.vendor_bot_id,
    workflow_id: botWorkflowId(row.id),
    recording: row.recording_id
      ? {
          id: row.recording_id,
          url: row.recording_url,
          started_at: iso(row.recording_started_at),
          ended_at: iso(row.recording_ended_at),
          duration_seconds: duration,
        }
      : null,
    activity_id: row.activity_id,
    leave_requested_at: iso(row.leave_requested_at),
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    ended_at: iso(row.ended_at),
  };
}

const historyView = (e: BotEventRow) => ({
  status: e.status,
  vendor_code: e.vendor_code,
  sub_code: e.sub_code,
  message: e.message,
  occurred_at: e.occurred_at.toISOString(),
});

function detailView(row: BotRow, history: BotEventRow[]) {
  return {
    ...botView(row),
    status_history: history.map(historyView),
    transcript: row.transcript !== null ? { text: row.transcript, attendees: row.attendees ?? [] } : null,
  };
}

const botNotFound = () => notFound('Meeting bot not found');

export interface CreateBotInput {
  meeting_url: string;
  join_at?: string | null;
  bot_name?: string | null;
  account_id?: string | null;
  deal_id?: string | null;
  contact_ids?: string[] | null;
}

/**
 * A bot row and its workflow (`meeting-bot:<id>`), together: the row is inserted and the workflow
 * started in one transaction holding the bot's advisory lock, so an unreachable Temporal leaves
 * nothing behind and the workflow's first read waits for the commit.
 */
export async function createBot(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  input: CreateBotInput,
) {
  const platform = meetingPlatform(input.meeting_url);
  if (!platform) throw invalid('meeting_url is not a Zoom, Google Meet or Microsoft Teams meeting link');
  const { sql, config } = deps;
  const id = newId();
  const contactIds = [...new Set(input.contact_ids ?? [])];
  const row = await sql.begin(async (tx) => {
    if (input.account_id && !(await meetings.accountInOrg(tx, orgId, input.account_id))) throw notFound('Account not found');
    if (input.deal_id && !(await meetings.dealInOrg(tx, orgId, input.deal_id))) throw notFound('Deal not found');
    const missing = await meetings.missingContacts(tx, orgId, contactIds);
    if (missing.length) throw notFound(`Contact not found: ${missing[0]}`);
    await meetings.lockBot(tx, orgId, id);
    const inserted = await meetings.insertBot(tx, orgId, {
      id,
      meeting_url: input.meeting_url,
      platform,
      bot_name: input.bot_name ?? DEFAULT_BOT_NAME,
      join_at: input.join_at ? new Date(input.join_at) : null,
      account_id: input.account_id ?? null,
      deal_id: input.deal_id ?? null,
      contact_ids: contactIds,
      vendor: config.MEETING_VENDOR_BASE_URL ? 'recall' : 'simulated',
      created_by: actor,
    });
    await startWorkflow(deps, meetingBotWorkflowRef, orgId, {
      workflowId: botWorkflowId(id),
      args: [
        {
          botId: id,
          orgId,
          limits: {
            joinTimeoutMs: config.MEETING_JOIN_TIMEOUT_SECONDS * 1000,
            maxDurationMs: config.MEETING_MAX_DURATION_SECONDS * 1000,
            transcriptTimeoutMs: config.MEETING_TRANSCRIPT_TIMEOUT_SECONDS * 1000,
          },
        } satisfies MeetingBotInput,
      ],
    });
    return inserted;
  });
  deps.logger.info({ botId: id, orgId, platform }, 'meeting bot created');
  return botView(row);
}

export async function listBots(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { status?: BotStatus; account_id?: string; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const filter = { status: query.status, account_id: query.account_id, limit: query.limit, after };
  const [rows, total] = await Promise.all([meetings.listBots(deps.sql, orgId, filter), meetings.countBots(deps.sql, orgId, filter)]);
  return cursorPage(rows, query.limit, total, (last) => ({ t: last.cursor_t, id: last.id }), botView);
}

export async function getBot(deps: Pick<ServiceDeps, 'sql'>, orgId: string, botId: string) {
  // One snapshot, so the history always reaches the row's status.
  const [row, history] = await deps.sql.begin(
    'isolation level repeatable read',
    async (tx) => [await meetings.findBot(tx, orgId, botId), await meetings.botHistory(tx, orgId, botId)] as const,
  );
  if (!row) throw botNotFound();
  return detailView(row, history);
}

/**
 * Asks the bot to leave the call (or never join): the leave request is recorded and the workflow told
 * in one transaction; the workflow removes the vendor's bot. A bot that has ended is a 409.
 */
export async function removeBot(deps: Pick<ServiceDeps, 'sql' | 'temporal'>, orgId: string, botId: string) {
  const row = await deps.sql.begin(async (tx) => {
    const marked = await meetings.requestLeave(tx, orgId, botId);
    if (!marked) {
      const existing = await meetings.findBot(tx, orgId, botId);
      if (!existing) throw botNotFound();
      throw conflict(`Cannot remove a bot that is ${existing.status}`);
    }
    try {
      await signalWorkflow(deps, botWorkflowId(botId), leaveMeetingSignal);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw conflict('The bot workflow is no longer running');
      throw error;
    }
    return marked;
  });
  return botView(row);
}

// --- the capture webhook ---

/**
 * The first step of every capture request: without a signing secret every request is refused (503)
 * before its body is read; a signature that no configured secret verifies, or a timestamp more than
 * five minutes off, is 400. Returns the message id (`webhook-id`) and the verified body.
 */
export async function verifyCapture(
  deps: Pick<ServiceDeps, 'config'>,
  readBody: () => Promise<string>,
  headers: Record<string, string | string[] | undefined>,
): Promise<{ webhookId: string; raw: string }> {
  const secrets = webhookSecrets(deps.config);
  if (!secrets.length) throw unavailable('Meeting capture is not configured in this deployment');
  // Without its signature headers (or with a stale timestamp) the body is never read.
  if (!hasSignatureHeaders(headers)) throw invalid('Invalid webhook signature');
  const raw = await readBody();
  const webhookId = verifyWebhook(secrets, raw, headers);
  if (!webhookId) throw invalid('Invalid webhook signature');
  return { webhookId, raw };
}

/** A verified capture event, in the vendor's (Recall.ai's) shape. */
export interface CaptureEvent {
  event: string;
  data?: {
    data?: { code?: string | null; sub_code?: string | null; updated_at?: string | null } | null;
    bot?: { id: string; metadata?: Record<string, unknown> | null } | null;
    recording?: { id: string } | null;
    transcript?: { id: string } | null;
  } | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuidOrNull = (v: unknown): string | null => (typeof v === 'string' && UUID.test(v) ? v : null);

/**
 * Hands a verified event to its bot's workflow as one signal; false when it cannot be placed (no such
 * bot, a bot that has ended, another vendor bot's event). A redelivered message id is acknowledged
 * without a second signal. The delivery is recorded and the signal sent in one transaction, so a
 * failed signal leaves the id free for the vendor's retry.
 */
export async function placeCaptureEvent(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'logger'>,
  webhookId: string,
  body: CaptureEvent,
): Promise<boolean> {
  const bot = body.data?.bot;
  const orgId = uuidOrNull(bot?.metadata?.org_id);
  const botId = uuidOrNull(bot?.metadata?.bot_id);
  if (!bot || !orgId || !botId) return false;
  const event: VendorEvent = {
    webhook_id: webhookId,
    event: body.event,
    code: body.data?.data?.code ?? null,
    sub_code: body.data?.data?.sub_code ?? null,
    occurred_at: body.data?.data?.updated_at ?? new Date().toISOString(),
    vendor_bot_id: bot.id,
    recording_id: body.data?.recording?.id ?? null,
    transcript_id: body.data?.transcript?.id ?? null,
  };
  return deps.sql
    .begin(async (tx) => {
      const row = await meetings.findBot(tx, orgId, botId);
      if (!row || row.ended_at || (row.vendor_bot_id && row.vendor_bot_id !== bot.id)) return false;
      if (!(await meetings.recordDelivery(tx, orgId, botId, webhookId))) return true;
      try {
        await signalWorkflow(deps, botWorkflowId(botId), vendorEventSignal, event);
      } catch (error) {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        deps.logger.info({ botId, event: body.event }, 'capture event for a bot whose workflow has ended');
        throw new NotPlaced();
      }
      return true;
    })
    .catch((error: unknown) => {
      if (error instanceof NotPlaced) return false;
      throw error;
    });
}

/** Rolls the delivery record back when the workflow is gone. */
class NotPlaced extends Error {}
