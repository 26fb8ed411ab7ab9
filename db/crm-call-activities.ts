import { insertContactActivity, type ActivityMetadata } from './crm-activities';
import type { Db } from './client';

// A finished campaign call as an activity of the CRM contact it reached: the contact the campaign
// contact names in `data.crm_contact_id`, else the organization's oldest contact with the dialed number.

interface FinishedCall {
  idempotency_key: string;
  phone_number: string | null;
  status: string;
  ended_at: Date | null;
  duration_seconds: number | null;
  outcome: Record<string, unknown>;
  campaign_id: string;
  campaign_name: string;
  created_by: string;
  crm_contact_id: string | null;
}

const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

const text = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** Writes one `call` activity per call among `keys` that reached a CRM contact; returns how many were written. */
export async function recordCallActivities(db: Db, orgId: string, keys: string[]): Promise<number> {
  if (!keys.length) return 0;
  // The calls first (MATERIALIZED), then ids compared as uuids (a campaign contact's id in contact_ref, a CRM
  // contact's in data.crm_contact_id), so every lookup goes through a primary key or the phone index: comparing
  // them as text read every campaign contact of the organization once per call.
  const calls = await db<FinishedCall[]>`
    WITH calls AS MATERIALIZED (
      SELECT * FROM conversations WHERE org_id = ${orgId} AND idempotency_key = ANY(${keys}::text[])
    )
    SELECT conv.idempotency_key, conv.phone_number, conv.status, conv.ended_at, conv.duration_seconds, conv.outcome,
           c.id AS campaign_id, c.name AS campaign_name, c.created_by,
           coalesce(
             (SELECT ct.id FROM contacts ct
              WHERE ct.org_id = ${orgId}
                AND ct.id = CASE WHEN cc.data->>'crm_contact_id' ~* ${UUID_PATTERN} THEN (cc.data->>'crm_contact_id')::uuid END),
             (SELECT ct.id FROM contacts ct
              WHERE ct.org_id = ${orgId} AND ct.phone = conv.phone_number ORDER BY ct.created_at, ct.id LIMIT 1)
           ) AS crm_contact_id
    FROM calls conv
    JOIN campaign_contacts cc ON cc.org_id = conv.org_id
      AND cc.id = CASE WHEN conv.contact_ref ~* ${UUID_PATTERN} THEN conv.contact_ref::uuid END
    JOIN campaigns c ON c.org_id = conv.org_id AND c.id = conv.campaign_id`;
  let written = 0;
  for (const call of calls) {
    if (!call.crm_contact_id) continue;
    const o = call.outcome ?? {};
    const disposition = text(o.disposition) ?? call.status;
    const metadata: ActivityMetadata & Record<string, unknown> = {
      provider: text(o.provider),
      recording_url: text(o.recording_url),
      transcript: text(o.transcript),
      summary: text(o.summary),
      outcome: disposition,
      call_status: call.status,
      duration_seconds: call.duration_seconds,
      campaign_id: call.campaign_id,
      call_key: call.idempotency_key,
      provider_call_id: text(o.provider_call_id),
      phone_number: call.phone_number,
    };
    const id = await insertContactActivity(
      db,
      orgId,
      call.crm_contact_id,
      {
        type: 'call',
        subject: `${call.campaign_name}: ${disposition.replace(/_/g, ' ')}`,
        body: text(o.summary),
        contact_id: call.crm_contact_id,
        due_at: (call.ended_at ?? new Date()).toISOString(),
        duration_minutes: call.duration_seconds ? Math.ceil(call.duration_seconds / 60) : null,
        metadata,
        created_by: call.created_by,
      },
      'outbound',
    );
    if (id) written++;
  }
  return written;
}
