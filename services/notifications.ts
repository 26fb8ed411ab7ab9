import type { Client } from '@temporalio/client';
import type { Db, Sql } from '../db/client';
import * as db from '../db/notifications';
import { invalid, notFound } from '../domain/errors';
import {
  NOTIFICATION_EVENTS,
  SUBSCRIBABLE_EVENTS,
  findEventDefinition,
  isSubscribable,
  type EmailCadence,
} from '../domain/notification-events';
import {
  dealChangeEvents,
  describeEvent,
  effectivePreference,
  renderDigestEmail,
  renderImmediateEmail,
  type DealSnapshot,
  type NotificationEvent,
} from '../domain/notifications';
import type { Config } from '../platform/config';
import { newId } from '../platform/ids';
import type { Logger } from '../platform/logger';
import type { MailTransport } from '../platform/mail';
import { organizationAttribute } from '../platform/temporal';
import {
  notificationActorId,
  notificationEventsSignal,
  type NotificationActorInput,
  type NotificationActorSettings,
} from '../workflows/notification-messages';
import type { notificationActor } from '../workflows/notifications';
import type { ServiceDeps } from './deps';
import { CreatedCursor, cursorPage, decodeCursor } from './pagination';

// ---- emission: what every area calls -----------------------------------------------------------

export interface NotificationEventInput {
  event_type: string;
  entity_type: string;
  entity_id: string;
  payload: Record<string, unknown>;
  actor_user_id?: string | null;
  recipient_user_ids?: string[];
}

/**
 * Writes the event into the outbox inside the caller's transaction (db may be sql or a tx), so the
 * change and its event commit together; the relay hands it to the organization's actor after commit.
 * `recipient_user_ids` are service user ids (users.id) the event must reach besides those the actor
 * resolves. An unregistered event_type is a programming error of the caller.
 */
export async function emitEvent(db_: Db, orgId: string, event: NotificationEventInput): Promise<void> {
  if (!findEventDefinition(event.event_type)) throw new Error(`unregistered notification event_type: ${event.event_type}`);
  await db.insertOutboxEvent(db_, orgId, {
    event_type: event.event_type,
    entity_type: event.entity_type,
    entity_id: event.entity_id,
    payload: event.payload,
    actor_user_id: event.actor_user_id ?? null,
    recipient_user_ids: [...new Set(event.recipient_user_ids ?? [])],
  });
}

// ---- catalog and manual emission -----------------------------------------------------------------

export const catalogEntry = (e: (typeof NOTIFICATION_EVENTS)[number]) => ({
  event_type: e.event_type,
  category: e.category,
  label: e.label,
  description: e.description,
  default_in_app: e.default_in_app,
  default_cadence: e.default_cadence,
});

export const eventCatalog = () => ({ events: SUBSCRIBABLE_EVENTS.map(catalogEntry) });

export interface ManualEventInput {
  event_type: string;
  entity_type: string;
  entity_id: string;
  payload: Record<string, unknown>;
}

/**
 * POST /notifications/events: deal events only, registered types only, the deal's stored facts
 * overwrite the caller's, and the event is queued (outbox) rather than delivered. A failure to queue
 * is answered `accepted: false`, never an error.
 */
export async function emitManualEvent(
  deps: Pick<ServiceDeps, 'sql' | 'logger'>,
  orgId: string,
  actorUserId: string | null,
  input: ManualEventInput,
): Promise<{ accepted: boolean }> {
  if (input.entity_type !== 'deal') throw invalid(`Unsupported entity_type '${input.entity_type}': only 'deal' is accepted`);
  if (!findEventDefinition(input.event_type)) throw invalid(`Unregistered event_type '${input.event_type}'`);
  const deal = await db.dealFacts(deps.sql, orgId, input.entity_id);
  if (!deal) throw notFound('Deal not found');
  const payload = {
    ...input.payload,
    deal_id: deal.id,
    deal_name: deal.name,
    value: deal.value === null ? null : Number(deal.value),
    currency: deal.currency,
    owner_id: deal.owner_id,
    new_owner_id: deal.owner_id,
  };
  try {
    await emitEvent(deps.sql, orgId, {
      event_type: input.event_type,
      entity_type: 'deal',
      entity_id: deal.id,
      payload,
      actor_user_id: actorUserId,
    });
    return { accepted: true };
  } catch (error) {
    deps.logger.warn({ err: error, orgId, eventType: input.event_type }, 'notification event dropped: the outbox write failed');
    return { accepted: false };
  }
}

// ---- the outbox relay --------------------------------------------------------------------------

type ActorConfig = Pick<
  Config,
  'TEMPORAL_TASK_QUEUE' | 'NOTIFICATION_DIGEST_INTERVAL_SECONDS' | 'NOTIFICATION_DIGEST_HOUR_UTC' | 'NOTIFICATION_ACTOR_HISTORY_LIMIT'
>;

export function actorSettings(config: ActorConfig): NotificationActorSettings {
  return {
    digest: { intervalSeconds: config.NOTIFICATION_DIGEST_INTERVAL_SECONDS, offsetSeconds: config.NOTIFICATION_DIGEST_HOUR_UTC * 3600 },
    historyLimit: config.NOTIFICATION_ACTOR_HISTORY_LIMIT,
    batchSize: 100,
  };
}

const toEvent = (row: db.OutboxRow): NotificationEvent => ({
  id: row.id,
  event_type: row.event_type,
  entity_type: row.entity_type,
  entity_id: row.entity_id,
  payload: row.payload,
  actor_user_id: row.actor_user_id,
  recipient_user_ids: row.recipient_user_ids,
  created_at: row.created_at.toISOString(),
});

/** Events per signal; a signal's payload stays far below Temporal's size limits. */
const RELAY_BATCH = 100;

/**
 * Hands an organization's pending outbox rows to its actor (signal-with-start), marking them relayed
 * in the same transaction: a failed signal leaves them pending for the next attempt, and a signal whose
 * mark did not commit is delivered twice and dropped by the actor's deduplication. Returns the count.
 */
export async function relayOrganization(deps: { sql: Sql; temporal: Client; config: ActorConfig }, orgId: string): Promise<number> {
  let relayed = 0;
  for (;;) {
    const count = await deps.sql.begin(async (tx) => {
      const rows = await db.claimPendingOutbox(tx, orgId, RELAY_BATCH);
      if (rows.length === 0) return 0;
      await deps.temporal.workflow.signalWithStart<typeof notificationActor, [NotificationEvent[]]>('notificationActor', {
        workflowId: notificationActorId(orgId),
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        args: [{ orgId, settings: actorSettings(deps.config) }] as [NotificationActorInput],
        typedSearchAttributes: organizationAttribute(orgId),
        signal: notificationEventsSignal,
        signalArgs: [rows.map(toEvent)],
      });
      await db.markOutboxRelayed(
        tx,
        orgId,
        rows.map((r) => r.id),
      );
      return rows.length;
    });
    relayed += count;
    if (count < RELAY_BATCH) return relayed;
  }
}

/** One pass over every organization with pending events; failures are left for the next pass. */
export async function relayPending(
  deps: { sql: Sql; temporal: Client; config: ActorConfig; logger: Logger },
  olderThanSeconds = 0,
): Promise<{ relayed: number; failed: number }> {
  let relayed = 0;
  let failed = 0;
  for (const orgId of await db.organizationsWithPendingOutbox(deps.sql, 1000, olderThanSeconds)) {
    try {
      relayed += await relayOrganization(deps, orgId);
    } catch (error) {
      failed += 1;
      deps.logger.warn({ err: error, orgId }, 'notification relay failed; the events stay in the outbox');
    }
  }
  return { relayed, failed };
}

export interface OutboxRelay {
  stop(): Promise<void>;
}

/**
 * Runs in every worker: a committed event wakes it at once (LISTEN on the outbox channel, whose
 * notifications Postgres delivers only on commit), and a sweep every NOTIFICATION_RELAY_INTERVAL_SECONDS
 * takes whatever a missed wake-up or an unreachable Temporal left behind.
 */
export async function startOutboxRelay(deps: {
  sql: Sql;
  temporal: Client;
  config: ActorConfig & Pick<Config, 'NOTIFICATION_RELAY_INTERVAL_SECONDS'>;
  logger: Logger;
}): Promise<OutboxRelay> {
  const waiting = new Set<string>();
  let running: Promise<void> | null = null;
  let stopped = false;
  let failing = false;

  const drain = (orgs: 'all' | string[]) => {
    if (orgs !== 'all') for (const o of orgs) waiting.add(o);
    else waiting.add('*');
    if (running || stopped) return;
    running = (async () => {
      while (waiting.size > 0 && !stopped) {
        const batch = [...waiting];
        waiting.clear();
        try {
          if (batch.includes('*')) {
            const { failed } = await relayPending(deps);
            failing = failed > 0;
          } else {
            for (const orgId of batch) await relayOrganization(deps, orgId);
            failing = false;
          }
        } catch (error) {
          if (!failing) deps.logger.warn({ err: error }, 'notification relay failed; the sweep retries');
          failing = true;
        }
      }
    })().finally(() => {
      running = null;
    });
  };

  const listener = await deps.sql
    .listen(
      db.OUTBOX_CHANNEL,
      (orgId) => drain([orgId]),
      () => drain('all'),
    )
    .catch((error: unknown) => {
      deps.logger.warn({ err: error }, 'notification relay could not LISTEN; relying on its sweep');
      return null;
    });
  const timer = setInterval(() => drain('all'), deps.config.NOTIFICATION_RELAY_INTERVAL_SECONDS * 1000);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await listener?.unlisten().catch(() => {});
      await running;
    },
  };
}

// ---- delivery: what the actor's activities do ----------------------------------------------------

export interface DeliveryResult {
  items: number;
  emails: number;
  digestEntries: number;
}

/**
 * Resolves each event's recipients (explicit ones, the deal's owner and new owner, subscribers; for an
 * always-send alert nobody was named for, the organization's admins), applies their preferences, and
 * writes in-app items, queued immediate emails and digest entries in one transaction. Everything is
 * keyed by event and user, so delivering the same events again changes nothing.
 */
export async function deliverEvents(deps: Pick<ServiceDeps, 'sql'>, orgId: string, events: NotificationEvent[]): Promise<DeliveryResult> {
  const known = events.filter((e) => findEventDefinition(e.event_type));
  if (known.length === 0) return { items: 0, emails: 0, digestEntries: 0 };
  const ownerIds = new Set<string>();
  const explicitIds = new Set<string>();
  for (const e of known) {
    for (const id of e.recipient_user_ids) explicitIds.add(id);
    if (e.entity_type === 'deal')
      for (const k of ['owner_id', 'new_owner_id']) if (typeof e.payload[k] === 'string') ownerIds.add(e.payload[k] as string);
  }
  const types = [...new Set(known.map((e) => e.event_type))];
  const [owners, explicit, subscriberLists, admins] = await Promise.all([
    db.membersByExternalIds(deps.sql, orgId, [...ownerIds]),
    db.membersByIds(deps.sql, orgId, [...explicitIds]),
    Promise.all(types.map(async (t) => [t, await db.subscribersOf(deps.sql, orgId, t)] as const)),
    known.some((e) => findEventDefinition(e.event_type)!.always_send) ? db.organizationAdmins(deps.sql, orgId) : Promise.resolve([]),
  ]);
  const byExternal = new Map(owners.map((r) => [r.external_id, r]));
  const byId = new Map([...owners, ...explicit, ...admins, ...subscriberLists.flatMap(([, l]) => l)].map((r) => [r.user_id, r]));
  const subscribers = new Map(subscriberLists.map(([t, l]) => [t, l.map((r) => r.user_id)]));
  const stored = await db.preferencesOf(deps.sql, orgId, [...byId.keys()], types);
  const prefOf = new Map(stored.map((p) => [`${p.user_id}|${p.event_type}`, p]));

  const items: db.NewItem[] = [];
  const emails: db.NewEmail[] = [];
  const digest: db.DigestEntry[] = [];
  for (const e of known) {
    const def = findEventDefinition(e.event_type)!;
    const recipients = new Set<string>();
    for (const id of e.recipient_user_ids) if (byId.has(id)) recipients.add(id);
    if (e.entity_type === 'deal') {
      for (const k of ['owner_id', 'new_owner_id']) {
        const member = typeof e.payload[k] === 'string' ? byExternal.get(e.payload[k] as string) : undefined;
        if (member) recipients.add(member.user_id);
      }
    }
    for (const id of subscribers.get(e.event_type) ?? []) recipients.add(id);
    // Nobody is told about their own change; an operational alert reaches someone whatever happens.
    if (!def.always_send && e.actor_user_id) recipients.delete(e.actor_user_id);
    if (def.always_send && recipients.size === 0) for (const a of admins) recipients.add(a.user_id);

    const { title, body } = describeEvent(e);
    const createdAt = new Date(e.created_at);
    for (const userId of recipients) {
      const pref = effectivePreference(def, prefOf.get(`${userId}|${e.event_type}`));
      if (pref.in_app) {
        items.push({
          user_id: userId,
          event_id: e.id,
          event_type: e.event_type,
          category: def.category,
          entity_type: e.entity_type,
          entity_id: e.entity_id,
          title,
          body,
          payload: e.payload,
          created_at: createdAt,
        });
      }
      const address = byId.get(userId)?.email;
      if (!address || pref.email_cadence === 'off') continue;
      if (pref.email_cadence === 'immediate') {
        const mail = renderImmediateEmail({ title, body });
        emails.push({
          user_id: userId,
          idempotency_key: `immediate:${e.id}:${userId}`,
          kind: 'immediate',
          to_address: address,
          subject: mail.subject,
          text_body: mail.text,
          html_body: mail.html,
        });
      } else {
        digest.push({ user_id: userId, event_id: e.id, event_type: e.event_type, title, body, created_at: createdAt });
      }
    }
  }
  return deps.sql.begin(async (tx) => ({
    items: await db.insertItems(tx, orgId, items),
    emails: await db.insertEmails(tx, orgId, emails),
    digestEntries: await db.insertDigestEntries(tx, orgId, digest),
  }));
}

/** Attempts per email before it is left aside (with its last error) rather than retried forever. */
const MAX_EMAIL_ATTEMPTS = 5;

/**
 * Sends the organization's queued emails, one at a time, each locked while it is sent and marked sent
 * in the same transaction: a retried activity skips what already went out. Returns sent and failed counts.
 */
export async function sendQueuedEmails(
  deps: Pick<ServiceDeps, 'sql' | 'logger'> & { mail: MailTransport },
  orgId: string,
  limit = 500,
): Promise<{ sent: number; failed: number }> {
  let sent = 0;
  let failed = 0;
  const failedIds = new Set<string>();
  while (sent + failed < limit) {
    const outcome = await deps.sql.begin(async (tx) => {
      // One that failed in this call waits for the next; the others still go out.
      const email = await db.claimUnsentEmail(tx, orgId, MAX_EMAIL_ATTEMPTS, [...failedIds]);
      if (!email) return 'none' as const;
      try {
        await deps.mail.send({
          to: email.to_address,
          subject: email.subject,
          text: email.text_body,
          html: email.html_body,
          idempotencyKey: email.idempotency_key,
        });
        await db.markEmailSent(tx, orgId, email.id);
        return 'sent' as const;
      } catch (error) {
        failedIds.add(email.id);
        await db.markEmailFailed(tx, orgId, email.id, error instanceof Error ? error.message : String(error));
        deps.logger.warn({ err: error, orgId, emailId: email.id }, 'notification email failed');
        return 'failed' as const;
      }
    });
    if (outcome === 'none') break;
    if (outcome === 'sent') sent += 1;
    else failed += 1;
  }
  return { sent, failed };
}

/**
 * Collects each recipient's digest entries created before `until` into one email (keyed by user and
 * window, so a repeat builds nothing twice). Recipients without an address have their entries closed.
 */
export async function buildDigests(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  until: Date,
): Promise<{ digests: number; pending: boolean }> {
  let digests = 0;
  for (const userId of await db.usersWithPendingDigest(deps.sql, orgId, until)) {
    await deps.sql.begin(async (tx) => {
      const [recipient] = await db.membersByIds(tx, orgId, [userId]);
      const emailId = newId();
      const entries = await db.takeDigestEntries(tx, orgId, userId, until, emailId);
      if (entries.length === 0 || !recipient?.email) return;
      entries.sort((a, b) => a.created_at.getTime() - b.created_at.getTime());
      const mail = renderDigestEmail(entries);
      digests += await db.insertEmails(tx, orgId, [
        {
          id: emailId,
          user_id: userId,
          idempotency_key: `digest:${userId}:${until.toISOString()}`,
          kind: 'digest',
          to_address: recipient.email,
          subject: mail.subject,
          text_body: mail.text,
          html_body: mail.html,
        },
      ]);
    });
  }
  return { digests, pending: await db.hasPendingDigest(deps.sql, orgId) };
}

// ---- the user's feed and preferences ------------------------------------------------------------

export function itemView(row: db.ItemRow) {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    category: row.category,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    title: row.title,
    body: row.body,
    payload: row.payload,
    read: row.read_at !== null,
    read_at: row.read_at?.toISOString() ?? null,
    archived_at: row.archived_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

const itemNotFound = () => notFound('Notification not found');

/** Newest first; the cursor carries the last item's time and id. */
export async function listFeed(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  userId: string,
  q: { unread: boolean; cursor?: string; limit: number },
) {
  const after = decodeCursor(q.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    db.listItems(deps.sql, orgId, userId, { unread: q.unread, after, limit: q.limit + 1 }),
    db.countItems(deps.sql, orgId, userId, q.unread),
  ]);
  return cursorPage(rows.map(itemView), q.limit, total, (last) => ({ t: last.created_at, id: last.id }));
}

export async function unreadCount(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string) {
  return { unread: await db.countItems(deps.sql, orgId, userId, true) };
}

export async function markRead(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string, itemId: string) {
  const row = await db.markItemRead(deps.sql, orgId, userId, itemId);
  if (!row) throw itemNotFound();
  return itemView(row);
}

export async function markAllRead(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string) {
  return { updated: await db.markAllRead(deps.sql, orgId, userId) };
}

export async function archive(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string, itemId: string) {
  const row = await db.archiveItem(deps.sql, orgId, userId, itemId);
  if (!row) throw itemNotFound();
  return itemView(row);
}

function preferenceView(def: (typeof NOTIFICATION_EVENTS)[number], stored?: db.PreferenceRow) {
  const effective = effectivePreference(def, stored);
  return {
    event_type: def.event_type,
    category: def.category,
    label: def.label,
    in_app: effective.in_app,
    email_cadence: effective.email_cadence,
    subscribed: stored?.subscribed ?? false,
    customized: stored !== undefined && (stored.in_app !== null || stored.email_cadence !== null),
  };
}

/** Every subscribable event type with the user's effective preference (the catalog's default where unset). */
export async function listPreferences(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string) {
  const stored = new Map((await db.preferencesOfUser(deps.sql, orgId, userId)).map((p) => [p.event_type, p]));
  return { preferences: SUBSCRIBABLE_EVENTS.map((def) => preferenceView(def, stored.get(def.event_type))) };
}

export interface PreferencePatch {
  in_app?: boolean | null;
  email_cadence?: EmailCadence | null;
  subscribed?: boolean;
}

/** Only the fields sent change; null returns a field to the catalog's default. Always-send events take none. */
export async function updatePreference(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  userId: string,
  eventType: string,
  patch: PreferencePatch,
) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send in_app, email_cadence or subscribed');
  const def = findEventDefinition(eventType);
  if (!def) throw invalid(`Unregistered event_type '${eventType}'`);
  if (!isSubscribable(eventType)) throw invalid(`'${eventType}' is an operational alert that ignores preferences`);
  const row = await db.upsertPreference(deps.sql, orgId, userId, eventType, patch);
  return preferenceView(def, row);
}

// ---- events the service produces itself ---------------------------------------------------------

/**
 * Emits the events of a deal write (domain/notifications.ts `dealChangeEvents`) into the outbox, in
 * the caller's transaction. `before` is null for a create.
 */
export async function emitDealEvents(
  tx: Db,
  orgId: string,
  before: DealSnapshot | null,
  after: DealSnapshot,
  actorUserId: string | null,
): Promise<void> {
  for (const e of dealChangeEvents(before, after)) {
    await emitEvent(tx, orgId, {
      event_type: e.event_type,
      entity_type: 'deal',
      entity_id: after.id,
      payload: e.payload,
      actor_user_id: actorUserId,
    });
  }
}

/** A deal row as notifications see it (value as a number). */
export const dealSnapshot = (row: {
  id: string;
  name: string;
  stage: string;
  value: string | number | null;
  currency: string | null;
  owner_id: string | null;
}): DealSnapshot => ({
  id: row.id,
  name: row.name,
  stage: row.stage,
  value: row.value === null ? null : Number(row.value),
  currency: row.currency,
  owner_id: row.owner_id,
});
