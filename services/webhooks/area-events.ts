import type { Db } from '../../db/client';
import { datasetsOfSource } from '../../db/knowledge-base';
import * as db from '../../db/webhooks';
import { emitWebhookEvent } from './emit';

// The webhook-only events, emitted by the service that makes the change, in its transaction.

const text = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

/**
 * `call.ended` for each call among `keys` that just turned final (campaign dispatch records them): its
 * status, the outcome the provider reported, the duration, and the recording and transcript links when
 * the provider gave them. One look-up when no endpoint subscribes.
 */
export async function emitCallsEnded(tx: Db, orgId: string, keys: string[]): Promise<void> {
  if (!keys.length || !(await db.anySubscriber(tx, orgId, 'call.ended'))) return;
  for (const call of await db.endedCalls(tx, orgId, keys)) {
    const o = call.outcome ?? {};
    await emitWebhookEvent(tx, orgId, {
      event_type: 'call.ended',
      data: {
        call_id: call.id,
        call_key: call.idempotency_key,
        campaign_id: call.campaign_id,
        campaign_name: call.campaign_name,
        campaign_contact_id: call.contact_ref,
        agent_id: call.agent_id,
        phone_number: call.phone_number,
        direction: call.direction ?? 'outbound',
        status: call.status,
        outcome: text(o.disposition) ?? call.status,
        reason: text(o.reason),
        started_at: iso(call.started_at),
        ended_at: iso(call.ended_at),
        duration_seconds: call.duration_seconds,
        summary: text(o.summary),
        recording_url: text(o.recording_url),
        transcript_url: text(o.transcript_url),
        provider: text(o.provider),
        provider_call_id: text(o.provider_call_id),
      },
    });
  }
}

/** `knowledge_source.ingested`: a source's new generation is the one queries see. */
export async function emitSourceIngested(
  tx: Db,
  orgId: string,
  source: {
    id: string;
    name: string;
    type: string;
    url: string | null;
    chunk_count: number;
    embedding_model: string | null;
    ingested_at: Date | null;
  },
): Promise<void> {
  if (!(await db.anySubscriber(tx, orgId, 'knowledge_source.ingested'))) return;
  const datasets = await datasetsOfSource(tx, orgId, source.id);
  await emitWebhookEvent(tx, orgId, {
    event_type: 'knowledge_source.ingested',
    data: {
      source_id: source.id,
      source_name: source.name,
      source_type: source.type,
      url: source.url,
      dataset_ids: datasets.map((d) => d.id),
      chunk_count: source.chunk_count,
      embedding_model: source.embedding_model,
      ingested_at: iso(source.ingested_at),
    },
  });
}
