import type { Counts } from '../../domain/outreach/analytics';
import type { Db } from '../client';

// SQL of a sequence's analytics: counts per (step, variant) over its sent steps. Every received message
// counts for the step it answers: the latest step of its thread sent before it arrived; an unsubscribe
// for the latest step its enrollment was sent before it. Opens and clicks count on the message they
// were made on (outreach_tracking_events), a person's and a machine's apart.

export interface StepVariantCounts extends Counts {
  step: number;
  variant: number;
}

export async function sequenceCounts(db: Db, orgId: string, sequenceId: string): Promise<StepVariantCounts[]> {
  return db<StepVariantCounts[]>`
    WITH sent AS (
      SELECT m.id, m.thread_id, m.enrollment_id, m.step, coalesce(m.variant, 0) AS variant, coalesce(m.sent_at, m.created_at) AS at,
             (m.status = 'failed' AND e.status = 'bounced') AS refused, e.unsubscribed_at,
             EXISTS (SELECT 1 FROM outreach_tracked_messages tm WHERE tm.message_id = m.id AND tm.org_id = m.org_id) AS tracked
      FROM outreach_messages m
      JOIN outreach_threads t ON t.id = m.thread_id AND t.org_id = m.org_id
      LEFT JOIN outreach_enrollments e ON e.id = m.enrollment_id AND e.org_id = m.org_id
      WHERE m.org_id = ${orgId} AND t.sequence_id = ${sequenceId} AND m.direction = 'outbound' AND m.kind = 'sequence'
        -- Handed to the server: sent, unconfirmed, or refused as a bounce at the SMTP door (the step's
        -- last attempt only: attempts refused for now before it are one message, not several).
        AND (m.status IN ('sent', 'unconfirmed') OR (m.status = 'failed' AND e.status = 'bounced' AND NOT EXISTS (
          SELECT 1 FROM outreach_messages later
          WHERE later.org_id = m.org_id AND later.enrollment_id = m.enrollment_id AND later.step = m.step
            AND later.direction = 'outbound' AND later.created_at > m.created_at)))
    ),
    answers AS (
      SELECT i.classification,
             (SELECT s.id FROM sent s WHERE s.thread_id = i.thread_id AND s.at <= coalesce(i.received_at, i.created_at) ORDER BY s.at DESC, s.id DESC LIMIT 1) AS sent_id
      FROM outreach_messages i
      JOIN outreach_threads t ON t.id = i.thread_id AND t.org_id = i.org_id
      WHERE i.org_id = ${orgId} AND t.sequence_id = ${sequenceId} AND i.direction = 'inbound'
    ),
    per AS (
      SELECT s.step, s.variant,
        s.refused OR EXISTS (SELECT 1 FROM answers a WHERE a.sent_id = s.id AND a.classification = 'bounce') AS bounced,
        EXISTS (SELECT 1 FROM answers a WHERE a.sent_id = s.id AND a.classification IN ('interested', 'not_interested', 'other')) AS replied,
        EXISTS (SELECT 1 FROM answers a WHERE a.sent_id = s.id AND a.classification = 'interested') AS interested,
        EXISTS (SELECT 1 FROM answers a WHERE a.sent_id = s.id AND a.classification = 'not_interested') AS not_interested,
        EXISTS (SELECT 1 FROM answers a WHERE a.sent_id = s.id AND a.classification IN ('out_of_office', 'auto_reply')) AS auto_replied,
        s.unsubscribed_at IS NOT NULL AND s.id = (
          SELECT s2.id FROM sent s2 WHERE s2.enrollment_id = s.enrollment_id AND s2.at <= s.unsubscribed_at ORDER BY s2.at DESC, s2.id DESC LIMIT 1
        ) AS unsubscribed,
        s.tracked,
        ev.opens, ev.clicks, ev.machine_opens, ev.machine_clicks
      FROM sent s
      CROSS JOIN LATERAL (
        SELECT (count(*) FILTER (WHERE kind = 'open' AND bot_reason IS NULL))::int AS opens,
               (count(*) FILTER (WHERE kind = 'click' AND bot_reason IS NULL))::int AS clicks,
               (count(*) FILTER (WHERE kind = 'open' AND bot_reason IS NOT NULL))::int AS machine_opens,
               (count(*) FILTER (WHERE kind = 'click' AND bot_reason IS NOT NULL))::int AS machine_clicks
        FROM outreach_tracking_events WHERE org_id = ${orgId} AND message_id = s.id
      ) ev
    )
    SELECT step, variant, count(*)::int AS sent,
      (count(*) FILTER (WHERE bounced))::int AS bounced,
      (count(*) FILTER (WHERE replied))::int AS replied,
      (count(*) FILTER (WHERE interested))::int AS interested,
      (count(*) FILTER (WHERE not_interested))::int AS not_interested,
      (count(*) FILTER (WHERE auto_replied))::int AS auto_replied,
      (count(*) FILTER (WHERE unsubscribed))::int AS unsubscribed,
      (count(*) FILTER (WHERE tracked AND NOT bounced))::int AS tracked,
      coalesce(sum(opens), 0)::int AS opens,
      (count(*) FILTER (WHERE tracked AND NOT bounced AND (opens > 0 OR clicks > 0)))::int AS unique_opens,
      coalesce(sum(clicks), 0)::int AS clicks,
      (count(*) FILTER (WHERE tracked AND NOT bounced AND clicks > 0))::int AS unique_clicks,
      coalesce(sum(machine_opens), 0)::int AS machine_opens,
      coalesce(sum(machine_clicks), 0)::int AS machine_clicks
    FROM per GROUP BY step, variant ORDER BY step, variant`;
}
