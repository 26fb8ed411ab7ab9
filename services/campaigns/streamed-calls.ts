import type { Sql } from '../../db/client';
import { isFinalCallStatus, type CallEvent } from '../../domain/campaigns';

// A Twilio campaign call is streamed to the voice engine, so its outcome is its conversation's. The
// provider's own final report is read in that light: a call the engine took ends when its conversation
// ends (Twilio's `completed` arrives with the caller's hang-up, before the conversation is summed up),
// and a call Twilio completed that no engine took never reached the agent: it failed (`stream_failed`)
// and is retried as the campaign says.

interface Taken {
  idempotency_key: string;
  engine_id: string | null;
}

export async function settleStreamedEvents(sql: Sql, orgId: string, events: CallEvent[]): Promise<CallEvent[]> {
  const twilioFinal = events.filter((e) => e.outcome?.provider === 'twilio' && isFinalCallStatus(e.status));
  if (!twilioFinal.length) return events;
  const rows = await sql<Taken[]>`
    SELECT idempotency_key, engine_id FROM conversations
    WHERE org_id = ${orgId} AND idempotency_key = ANY(${twilioFinal.map((e) => e.idempotency_key)}::text[])`;
  const taken = new Map(rows.map((r) => [r.idempotency_key, r.engine_id !== null]));
  return events.map((e) => {
    if (e.outcome?.provider !== 'twilio' || !isFinalCallStatus(e.status) || !taken.has(e.idempotency_key)) return e;
    if (taken.get(e.idempotency_key)) {
      // The conversation decides; keep what Twilio said beside it.
      const { disposition: _, ...said } = e.outcome;
      return { ...e, status: 'in_progress', ended_at: undefined, outcome: { ...said, provider_final_status: e.status } };
    }
    if (e.status !== 'completed') return e; // busy, no answer, a machine, a failure: as Twilio says
    return {
      ...e,
      status: 'failed',
      outcome: { ...e.outcome, disposition: 'stream_failed', reason: 'stream_failed: the answered call never reached the voice engine' },
    };
  });
}
