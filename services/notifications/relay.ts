import type { Client } from '@temporalio/client';
import type { Sql } from '../../db/client';
import * as db from '../../db/notifications';
import type { NotificationEvent } from '../../domain/notifications';
import type { Config } from '../../platform/core/config';
import type { Logger } from '../../platform/core/logger';
import {
  notificationActorId,
  notificationActorWorkflow,
  notificationEventsSignal,
  type NotificationActorSettings,
} from '../../workflows/notification-messages';
import { signalWithStart } from '../workflow-client';

// The outbox relay: committed events go from the outbox to their organization's notification actor.

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
      await signalWithStart(deps, notificationActorWorkflow, orgId, {
        workflowId: notificationActorId(orgId),
        args: [{ orgId, settings: actorSettings(deps.config) }],
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
