import type { Client } from '@temporalio/client';
import type { Sql } from '../../db/client';
import { overdueEndpoints } from '../../db/webhook-deliveries';
import * as db from '../../db/webhooks';
import type { Config } from '../../platform/core/config';
import type { Logger } from '../../platform/core/logger';
import {
  type WebhookActorSettings,
  webhookEndpointActorId,
  webhookEndpointActorWorkflow,
  webhookWakeSignal,
} from '../../workflows/webhooks-messages';
import { signalWithStart } from '../workflow-client';
import { stepBoundMs } from './delivery';

// The relay: deliveries committed in Postgres wake their endpoint's actor. Runs in every worker.

type RelayConfig = Pick<
  Config,
  | 'TEMPORAL_TASK_QUEUE'
  | 'WEBHOOK_BATCH_SIZE'
  | 'WEBHOOK_ENDPOINT_CONCURRENCY'
  | 'WEBHOOK_TIMEOUT_MS'
  | 'WEBHOOK_ACTOR_IDLE_SECONDS'
  | 'WEBHOOK_ACTOR_HISTORY_LIMIT'
  | 'WEBHOOK_SWEEP_INTERVAL_SECONDS'
>;

export const actorSettings = (config: RelayConfig): WebhookActorSettings => ({
  stepTimeoutMs: stepBoundMs(config),
  idleMs: config.WEBHOOK_ACTOR_IDLE_SECONDS * 1000,
  historyLimit: config.WEBHOOK_ACTOR_HISTORY_LIMIT,
});

/** Wakes the endpoint's actor, starting it when it is not running. */
export async function wakeEndpointActor(deps: { temporal: Client; config: RelayConfig }, orgId: string, endpointId: string): Promise<void> {
  await signalWithStart(deps, webhookEndpointActorWorkflow, orgId, {
    workflowId: webhookEndpointActorId(endpointId),
    args: [{ orgId, endpointId, settings: actorSettings(deps.config) }],
    signal: webhookWakeSignal,
    signalArgs: [],
  });
}

/** Wakes the actors of endpoints whose deliveries are overdue (a missed wake-up, an actor that ended); how many. */
export async function sweepOverdue(deps: { sql: Sql; temporal: Client; config: RelayConfig; logger: Logger }): Promise<number> {
  const overdue = await overdueEndpoints(deps.sql, deps.config.WEBHOOK_SWEEP_INTERVAL_SECONDS, 1000);
  for (const e of overdue) await wakeEndpointActor(deps, e.org_id, e.id);
  return overdue.length;
}

export interface WebhookRelay {
  stop(): Promise<void>;
}

/**
 * How soon an endpoint's actor is woken again after a wake-up: the step a wake-up starts claims every
 * delivery due by then, so a burst of events costs a few signals, not one each.
 */
const WAKE_SPACING_MS = 100;

/**
 * LISTENs on the deliveries' channel (Postgres delivers a notification only when its writer commits) and
 * wakes each endpoint named, at most once per WAKE_SPACING_MS: further notifications for the same endpoint
 * collapse into one wake-up at the end of the spacing. A sweep every WEBHOOK_SWEEP_INTERVAL_SECONDS wakes
 * endpoints whose deliveries are overdue, whatever a missed notification or an unreachable Temporal left behind.
 */
export async function startWebhookRelay(deps: { sql: Sql; temporal: Client; config: RelayConfig; logger: Logger }): Promise<WebhookRelay> {
  const waiting = new Map<string, string>(); // endpoint id → organization id
  const wokenAt = new Map<string, number>(); // endpoint id → when it was last woken (ms)
  let sweepWanted = false;
  let running: Promise<void> | null = null;
  let later: NodeJS.Timeout | null = null;
  let stopped = false;
  let failing = false;

  const drain = () => {
    if (running || stopped) return;
    running = (async () => {
      while ((waiting.size > 0 || sweepWanted) && !stopped) {
        const now = Date.now();
        for (const [id, at] of wokenAt) if (now - at >= WAKE_SPACING_MS) wokenAt.delete(id);
        const ready = [...waiting].filter(([endpointId]) => !wokenAt.has(endpointId));
        for (const [endpointId] of ready) waiting.delete(endpointId);
        const sweep = sweepWanted;
        sweepWanted = false;
        try {
          for (const [endpointId, orgId] of ready) {
            wokenAt.set(endpointId, Date.now());
            await wakeEndpointActor(deps, orgId, endpointId);
          }
          if (sweep) await sweepOverdue(deps);
          failing = false;
        } catch (error) {
          // What was not woken is overdue by the next sweep, which wakes it then.
          if (!failing) deps.logger.warn({ err: error }, 'webhook relay failed; its sweep retries');
          failing = true;
        }
        if (ready.length === 0 && waiting.size > 0 && !sweepWanted) {
          // Only endpoints woken a moment ago wait: come back when the first spacing ends.
          const soonest = Math.min(...[...waiting.keys()].map((id) => (wokenAt.get(id) ?? now) + WAKE_SPACING_MS));
          later ??= setTimeout(
            () => {
              later = null;
              drain();
            },
            Math.max(1, soonest - now),
          );
          break;
        }
      }
    })().finally(() => {
      running = null;
    });
  };

  const listener = await deps.sql
    .listen(
      db.DELIVERY_CHANNEL,
      (payload) => {
        const [orgId, endpointId] = payload.split(':');
        if (!orgId || !endpointId) return;
        waiting.set(endpointId, orgId);
        drain();
      },
      () => {
        sweepWanted = true;
        drain();
      },
    )
    .catch((error: unknown) => {
      deps.logger.warn({ err: error }, 'webhook relay could not LISTEN; relying on its sweep');
      return null;
    });
  const timer = setInterval(() => {
    sweepWanted = true;
    drain();
  }, deps.config.WEBHOOK_SWEEP_INTERVAL_SECONDS * 1000);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      if (later) clearTimeout(later);
      await listener?.unlisten().catch(() => {});
      await running;
    },
  };
}
