import type { Client } from '@temporalio/client';
import * as contacts from '../../db/campaign-contacts';
import * as campaigns from '../../db/campaigns';
import type { Sql } from '../../db/client';
import { recordCallActivities } from '../../db/crm-call-activities';
import { providerCallStore } from '../../db/dialer-provider-calls';
import { simulatedCallStore } from '../../db/dialer-simulated-calls';
import {
  attemptKey,
  isInWindow,
  nextWindowOpening,
  numberForAttempt,
  parseAttemptKey,
  retryAt,
  stateAfterOutcome,
  type CallOutcome,
  type ContactState,
} from '../../domain/campaign-schedule';
import { isFinalCallStatus, type CallEvent } from '../../domain/campaigns';
import type { Config } from '../../platform/core/config';
import { isAccountRefusal } from '../../platform/adapters/dialers/accounts';
import { CallRejected, createConfiguredSimulatedDialer, createProviderDialer, type Dialer } from '../../platform/adapters/dialers/dialer';
import {
  callEventsSignal,
  campaignDispatcherRef,
  dispatcherWorkflowId,
  wakeDispatcherSignal,
  type DispatchCycleInput,
  type DispatchCycleResult,
  type DispatcherInput,
} from '../../workflows/campaign-messages';
import type { ServiceDeps } from '../deps';
import { cachedTelephonyOf, markTelephonyRefused } from '../integrations/telephony-accounts';
import { signalWithStart } from '../workflow-client';
import { campaignCallTwiml } from './call-twiml';
import { concurrencyLimit } from './concurrency';
import { failDoNotCallAttempts } from './do-not-call';
import { createDialGate, pacingOf } from './pacing';
import { pacedClaimBudget } from '../../domain/pacing';
import { settleStreamedEvents } from './streamed-calls';
import { emitCallsEnded } from '../webhooks/area-events';

// The organization's dispatcher (workflows/campaign-dispatch.ts): how services hand it call events and
// wake-ups, and the steps of its cycle (record, sweep, claim, dial), each a transaction or a dialer call.

type DispatcherConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'CAMPAIGN_SWEEP_INTERVAL_SECONDS' | 'CAMPAIGN_HISTORY_LIMIT'>;

function dispatcherInput(config: DispatcherConfig, orgId: string): DispatcherInput {
  return {
    orgId,
    settings: { sweepIntervalMs: config.CAMPAIGN_SWEEP_INTERVAL_SECONDS * 1000, historyLimit: config.CAMPAIGN_HISTORY_LIMIT },
  };
}

/**
 * Hands call events (or, without events, a wake-up) to the organization's dispatcher, starting it
 * when it is not running: the signal is in its history once this returns.
 */
export async function signalDispatcher(
  deps: Pick<ServiceDeps, 'temporal'> & { config: DispatcherConfig },
  orgId: string,
  events?: CallEvent[],
): Promise<void> {
  const options = { workflowId: dispatcherWorkflowId(orgId), args: [dispatcherInput(deps.config, orgId)] as [DispatcherInput] };
  if (events) await signalWithStart(deps, campaignDispatcherRef, orgId, { ...options, signal: callEventsSignal, signalArgs: [events] });
  else await signalWithStart(deps, campaignDispatcherRef, orgId, { ...options, signal: wakeDispatcherSignal, signalArgs: [] });
}

/** How many calls one cycle hands to the dialer at once. */
const DIAL_PARALLELISM = 16;

async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(lanes);
}

const failedEvent = (key: string, reason: string): CallEvent => ({ idempotency_key: key, status: 'failed', outcome: { reason } });

function toUpdate(event: CallEvent): contacts.ConversationUpdate {
  const outcome = { ...(event.outcome ?? {}), ...(event.provider_call_id ? { provider_call_id: event.provider_call_id } : {}) };
  return {
    key: event.idempotency_key,
    status: event.status,
    started_at: event.started_at ? new Date(event.started_at) : null,
    ended_at: event.ended_at ? new Date(event.ended_at) : null,
    duration_seconds: event.duration_seconds ?? null,
    outcome: Object.keys(outcome).length ? JSON.stringify(outcome) : null,
  };
}

/** Per key, the first final event wins; before it, the latest progress event. */
function latestPerKey(events: CallEvent[]): CallEvent[] {
  const byKey = new Map<string, CallEvent>();
  for (const e of events) {
    if (!parseAttemptKey(e.idempotency_key)) continue;
    const seen = byKey.get(e.idempotency_key);
    if (!seen || !isFinalCallStatus(seen.status)) byKey.set(e.idempotency_key, e);
  }
  return [...byKey.values()];
}

/**
 * Records call events: each conversation row takes its progress or outcome (once final, it stays),
 * and the contact whose current attempt ended is completed, retried later, or failed. Returns the
 * campaigns that had a contact become final.
 */
async function recordCallEvents(sql: Sql, orgId: string, events: CallEvent[]): Promise<string[]> {
  // Settled first: a provider's final report of a streamed call must not hide its conversation's end in the same batch.
  const latest = latestPerKey(await settleStreamedEvents(sql, orgId, events));
  if (!latest.length) return [];
  return sql.begin(async (tx) => {
    const finished = await contacts.updateConversations(tx, orgId, latest.map(toUpdate));
    // Each call turns final once, here: its CRM activity is written with it (docs/decisions/telephony.md).
    await recordCallActivities(tx, orgId, finished);
    // And its `call.ended` webhook message, for the organization's subscribed endpoints (services/webhooks).
    await emitCallsEnded(tx, orgId, finished);
    const byKey = new Map(latest.map((e) => [e.idempotency_key, e]));
    // A contact has one attempt in flight, so at most one of its calls turns final here.
    const ended = new Map<string, { attempt: number; status: CallOutcome }>();
    for (const key of finished) {
      const parsed = parseAttemptKey(key)!;
      ended.set(parsed.contactId, { attempt: parsed.attempt, status: byKey.get(key)!.status as CallOutcome });
    }
    const locked = await contacts.lockCallingContacts(tx, orgId, [...ended.keys()]);
    const now = new Date();
    const touched = new Set<string>();
    const ends: { id: string; status: ContactState; next_attempt_at: Date | null; last_outcome: string }[] = [];
    for (const c of locked) {
      const end = ended.get(c.id);
      if (!end || end.attempt !== c.attempts) continue;
      const state = stateAfterOutcome(end.status, c.attempts, c.max_attempts, c.campaign_status);
      ends.push({
        id: c.id,
        status: state,
        next_attempt_at: state === 'pending' ? retryAt(now, c.attempts, c.retry_backoff_seconds) : null,
        last_outcome: end.status,
      });
      if (state !== 'pending') touched.add(c.campaign_id);
    }
    await contacts.finishAttempts(tx, orgId, ends);
    return [...touched];
  });
}

/** Where an organization without a usable account sends its calls: nowhere, each attempt failed with the reason. */
const refusingDialer = (reason: string): Dialer => ({
  name: 'none',
  placeCall: async () => {
    throw new CallRejected(reason);
  },
  reconcile: async () => [],
});

/**
 * The dispatcher's cycle, built once per worker, with the dialer of each organization's account
 * (services/integrations/telephony-accounts.ts): its own, the deployment's, or the simulated one. The
 * simulated dialer reports outcomes from its timers through `workerClient`: the worker's own Temporal
 * client, known once an activity has run.
 */
export function createDispatchCycle(deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>, workerClient: () => Client | undefined) {
  const { sql, config, logger } = deps;
  const providerCalls = providerCallStore(sql);
  const simulated = createConfiguredSimulatedDialer(config, {
    simulatedCalls: simulatedCallStore(sql),
    logger,
    sink: async (orgId, events) => {
      const client = workerClient();
      if (!client) throw new Error('no Temporal client yet');
      await signalDispatcher({ temporal: client, config }, orgId, events);
    },
  });

  /** The organization's dialer now, and the connection whose keys it uses (null: none of the organization's). */
  async function dialerOf(orgId: string): Promise<{ dialer: Dialer; connectionId: string | null }> {
    const telephony = await cachedTelephonyOf(deps, orgId);
    if (telephony.kind === 'simulated') return { dialer: simulated, connectionId: null };
    if (telephony.kind === 'none') return { dialer: refusingDialer(telephony.reason), connectionId: null };
    return {
      dialer: createProviderDialer(config, telephony.account, {
        providerCalls,
        logger,
        answerTwiml: (r, account) => campaignCallTwiml(deps, r, account),
      }),
      connectionId: telephony.account.connectionId,
    };
  }

  /** Takes free slots for due contacts, in priority order, inside each contact's calling window. */
  async function claim(orgId: string): Promise<{ freeSlots: number; more: boolean }> {
    return sql.begin(async (tx) => {
      await campaigns.lockDispatch(tx, orgId, 'exclusive');
      const settings = await campaigns.findConcurrencySettings(tx, orgId);
      const limit = concurrencyLimit(config, settings);
      const free = Math.max(0, limit - (await contacts.inFlightCount(tx, orgId)));
      // No more than the pacing lets the next dial place within its horizon (services/campaigns/pacing.ts).
      const cap = Math.min(free, config.CAMPAIGN_DISPATCH_PAGE_SIZE, pacedClaimBudget(pacingOf(config, settings)));
      let budget = cap;
      let scanned = 0;
      const now = new Date();
      for (const campaign of budget > 0 ? await campaigns.activeCampaigns(tx, orgId) : []) {
        while (budget > 0 && scanned < config.CAMPAIGN_DISPATCH_PAGE_SIZE * 4) {
          const requested = budget;
          const due = await contacts.lockDueContacts(tx, orgId, campaign.id, requested);
          scanned += due.length;
          const ready: contacts.ContactRow[] = [];
          const later: { id: string; at: Date }[] = [];
          for (const c of due) {
            const zone = c.timezone ?? campaign.timezone;
            if (isInWindow(now, zone, campaign.calling_window)) ready.push(c);
            else later.push({ id: c.id, at: nextWindowOpening(now, zone, campaign.calling_window) });
          }
          await contacts.rescheduleContacts(tx, orgId, later);
          const started = new Map(
            (
              await contacts.startAttempts(
                tx,
                orgId,
                ready.map((c) => c.id),
              )
            ).map((s) => [s.id, s.attempts]),
          );
          const agentIds = [...new Set(ready.map((c) => c.agent_id ?? campaign.agent_id).filter((a): a is string => !!a))];
          const missing = new Set(await campaigns.missingAgents(tx, orgId, agentIds));
          await contacts.insertConversations(
            tx,
            orgId,
            ready
              .filter((c) => started.has(c.id))
              .map((c) => {
                const attempt = started.get(c.id)!;
                const agentId = c.agent_id ?? campaign.agent_id;
                return {
                  agent_id: agentId && !missing.has(agentId) ? agentId : null,
                  agent_version: c.agent_version ?? campaign.version,
                  campaign_id: campaign.id,
                  contact_ref: c.id,
                  phone_number: numberForAttempt(c.phone_numbers, attempt),
                  idempotency_key: attemptKey(campaign.id, c.id, attempt),
                };
              }),
          );
          budget -= started.size;
          if (due.length < requested) break; // the campaign has no more due contacts
        }
        if (budget <= 0) break;
      }
      const claimed = cap - budget;
      return { freeSlots: free - claimed, more: budget === 0 && free - claimed > 0 };
    });
  }

  /** Hands every claimed, undialed attempt to the dialer; safe to repeat, the dialer keys on the attempt. */
  async function dial(orgId: string, heartbeat: () => void): Promise<{ dialed: number; touched: string[]; left: number }> {
    const targets = await contacts.undialedAttempts(sql, orgId);
    if (!targets.length) return { dialed: 0, touched: [], left: 0 };
    const agentIds = [...new Set(targets.map((t) => t.agent_id).filter((a): a is string => !!a))];
    const missing = new Set(await campaigns.missingAgents(sql, orgId, agentIds));
    const dialed: { id: string; key: string }[] = [];
    const rejected: CallEvent[] = [];
    let transient: unknown;
    /** The connection's move to needs_reconnect: one per dial, however many of its lanes the provider refused. */
    let refusal: Promise<void> | undefined;
    const { dialer, connectionId } = await dialerOf(orgId);
    // The do-not-call list and the pace, right before each call (services/campaigns/pacing.ts).
    const gate = createDialGate(sql, orgId, pacingOf(config, await campaigns.findConcurrencySettings(sql, orgId)), heartbeat);
    const listed: { id: string; key: string }[] = [];
    let left = 0;
    await eachLimited(targets, DIAL_PARALLELISM, async (t) => {
      const key = attemptKey(t.campaign_id, t.id, t.attempts);
      if (!t.agent_id || missing.has(t.agent_id)) {
        rejected.push(failedEvent(key, 'agent_not_found'));
        return;
      }
      const admission = await gate.admit(numberForAttempt(t.phone_numbers, t.attempts), t.agent_number);
      if (admission === 'do_not_call') listed.push({ id: t.id, key });
      if (admission === 'later') left += 1;
      if (admission !== 'dial') return;
      try {
        await dialer.placeCall({
          idempotency_key: key,
          org_id: orgId,
          campaign_id: t.campaign_id,
          contact_id: t.id,
          attempt: t.attempts,
          to: numberForAttempt(t.phone_numbers, t.attempts),
          from: t.agent_number,
          agent_id: t.agent_id,
          agent_version: t.agent_version,
          agent_config: t.agent_config,
          initial_context: t.initial_context,
          data: t.data,
        });
        dialed.push({ id: t.id, key });
      } catch (err) {
        if (err instanceof CallRejected) rejected.push(failedEvent(key, err.message));
        else if (connectionId && isAccountRefusal(err)) {
          // The organization's own keys were refused: nothing rings until it puts new ones.
          refusal ??= markTelephonyRefused(deps, orgId, connectionId, (err as Error).message);
          await refusal;
          rejected.push(failedEvent(key, `telephony_account_refused: ${(err as Error).message}`.slice(0, 500)));
        } else transient ??= err;
      }
      heartbeat();
    });
    await contacts.markDialed(sql, orgId, dialed);
    const touched = [...(await recordCallEvents(sql, orgId, rejected)), ...(await failDoNotCallAttempts(sql, orgId, listed))];
    if (transient) throw transient; // the retry dials what is left, and nothing twice
    return { dialed: dialed.length, touched, left };
  }

  /** Outcomes the dialer still holds for reports that never arrived, and calls overdue beyond the timeout. */
  async function sweep(orgId: string): Promise<string[]> {
    const ringing = await contacts.callsDialedBefore(sql, orgId, new Date(Date.now() - 1000));
    if (!ringing.length) return [];
    const { dialer } = await dialerOf(orgId);
    const recovered = await dialer.reconcile(
      orgId,
      ringing.map((c) => attemptKey(c.campaign_id, c.id, c.attempts)),
    );
    const known = new Set(recovered.map((e) => e.idempotency_key));
    const overdue = await contacts.callsDialedBefore(sql, orgId, new Date(Date.now() - config.CAMPAIGN_CALL_TIMEOUT_SECONDS * 1000));
    const lost = overdue.map((c) => attemptKey(c.campaign_id, c.id, c.attempts)).filter((k) => !known.has(k));
    if (recovered.length || lost.length)
      logger.warn({ orgId, recovered: recovered.length, timedOut: lost.length }, 'campaign calls without a report');
    return recordCallEvents(sql, orgId, [...recovered, ...lost.map((k) => failedEvent(k, 'no_report_before_timeout'))]);
  }

  /** One turn of the organization's dispatcher: record, sweep, claim, dial; `heartbeat` while dialing. */
  return async function runDispatchCycle(input: DispatchCycleInput, heartbeat: () => void): Promise<DispatchCycleResult> {
    const { orgId } = input;
    const touched = new Set(await recordCallEvents(sql, orgId, input.events));
    if (input.sweep) for (const id of await sweep(orgId)) touched.add(id);
    const { freeSlots, more } = await claim(orgId);
    const { dialed, touched: rejectedIn, left } = await dial(orgId, heartbeat);
    for (const id of rejectedIn) touched.add(id);
    const [inFlight, next, settled] = await Promise.all([
      contacts.inFlightCount(sql, orgId),
      contacts.nextDueAt(sql, orgId),
      contacts.settledCampaigns(sql, orgId, [...touched]),
    ]);
    return {
      dispatched: dialed,
      inFlight,
      freeSlots,
      nextDueAt: next ? next.getTime() : null,
      more: more || left > 0,
      idle: inFlight === 0 && next === null,
      settledCampaigns: settled,
    };
  };
}
