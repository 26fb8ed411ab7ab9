import type { BotReason } from '../../domain/outreach/tracking';
import type { Db } from '../client';

// SQL of open and click tracking: which messages were sent tracked (and the URLs of their links), and
// each open and click. Tenant functions take (db, orgId, ...); the public routes find a message by the
// id their signed token names, across organizations, as the unsubscribe link finds its enrollment.

/**
 * The tracking host of each of these mailboxes whose sending domain (the mailbox's own, else the
 * organization's domain of its address) tracks opens and clicks and is verified, so its tracking CNAME
 * resolves. Mailboxes without one send untracked.
 */
export async function trackingHostsOf(db: Db, orgId: string, mailboxIds: string[]): Promise<Map<string, string>> {
  if (!mailboxIds.length) return new Map();
  const rows = await db<{ mailbox_id: string; tracking_host: string }[]>`
    SELECT mb.id AS mailbox_id, d.tracking_host
    FROM outreach_mailboxes mb
    JOIN outreach_domains d ON d.org_id = mb.org_id
      AND (d.id = mb.domain_id OR (mb.domain_id IS NULL AND d.name = lower(substring(mb.email_address FROM '@([^@]*)$'))))
    WHERE mb.org_id = ${orgId} AND mb.id = ANY(${mailboxIds}::uuid[]) AND d.tracking_enabled AND d.status = 'verified'`;
  return new Map(rows.map((r) => [r.mailbox_id, r.tracking_host]));
}

export async function insertTrackedMessage(db: Db, orgId: string, messageId: string, baseUrl: string, links: string[]): Promise<void> {
  await db`
    INSERT INTO outreach_tracked_messages (message_id, org_id, base_url, links)
    VALUES (${messageId}, ${orgId}, ${baseUrl}, ${links}::text[]) ON CONFLICT (message_id) DO NOTHING`;
}

export interface TrackedMessage {
  message_id: string;
  org_id: string;
  links: string[];
  sent_at: Date | null;
}

/** A tracked message by its id alone (the public routes' signed token names it). */
export async function findTrackedMessage(db: Db, messageId: string): Promise<TrackedMessage | undefined> {
  const [row]: [TrackedMessage?] = await db`
    SELECT t.message_id, t.org_id, t.links, m.sent_at
    FROM outreach_tracked_messages t JOIN outreach_messages m ON m.id = t.message_id AND m.org_id = t.org_id
    WHERE t.message_id = ${messageId}`;
  return row;
}

export async function countEvents(db: Db, orgId: string, messageId: string, kind: 'open' | 'click'): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outreach_tracking_events WHERE org_id = ${orgId} AND message_id = ${messageId} AND kind = ${kind}`;
  return row!.n;
}

export async function insertEvent(
  db: Db,
  orgId: string,
  event: {
    id: string;
    message_id: string;
    kind: 'open' | 'click';
    link_index: number | null;
    bot_reason: BotReason | null;
    user_agent: string | null;
    occurred_at: Date;
  },
): Promise<void> {
  await db`INSERT INTO outreach_tracking_events ${db({ ...event, org_id: orgId })}`;
}

/**
 * Whether another link of the message was clicked since `since`; if so those clicks, counted as a
 * person's until now, are a scanner's too (it follows every link of a message at once).
 */
export async function markClickBurst(db: Db, orgId: string, messageId: string, linkIndex: number, since: Date): Promise<boolean> {
  const others = await db<{ n: number }[]>`
    SELECT count(*)::int AS n FROM outreach_tracking_events
    WHERE org_id = ${orgId} AND message_id = ${messageId} AND kind = 'click' AND link_index <> ${linkIndex} AND occurred_at >= ${since}`;
  if (others[0]!.n === 0) return false;
  await db`
    UPDATE outreach_tracking_events SET bot_reason = 'scanner'
    WHERE org_id = ${orgId} AND message_id = ${messageId} AND kind = 'click' AND bot_reason IS NULL AND occurred_at >= ${since}`;
  return true;
}
