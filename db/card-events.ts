import type postgres from 'postgres';
import type { CardEventType } from '../domain/cards';
import type { Db } from './client';

export interface CardEventRow {
  id: string;
  org_id: string;
  card_id: string;
  share_link_id: string;
  event_type: CardEventType;
  source: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  referrer: string | null;
  detail: Record<string, unknown>;
  occurred_at: Date;
}

export type NewCardEvent = Omit<CardEventRow, 'org_id' | 'occurred_at'>;

export async function insertEvent(db: Db, orgId: string, event: NewCardEvent): Promise<void> {
  await db`INSERT INTO card_events ${db({ ...event, org_id: orgId, detail: db.json(event.detail as postgres.JSONValue) })}`;
}

export interface EventFilters {
  shareLinkId?: string;
  eventType?: CardEventType;
}

export async function listEvents(
  db: Db,
  orgId: string,
  cardId: string,
  f: EventFilters,
  page: { limit: number; offset: number },
): Promise<CardEventRow[]> {
  const link = f.shareLinkId === undefined ? db`` : db`AND share_link_id = ${f.shareLinkId}`;
  const type = f.eventType === undefined ? db`` : db`AND event_type = ${f.eventType}`;
  return db<CardEventRow[]>`
    SELECT * FROM card_events WHERE org_id = ${orgId} AND card_id = ${cardId} ${link} ${type}
    ORDER BY occurred_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** Days are UTC calendar days, `from` and `to` (YYYY-MM-DD) both included. */
export interface DayRange {
  from: string;
  to: string;
}

export interface DayCount {
  day: string;
  share_link_id: string;
  event_type: CardEventType;
  count: number;
}

/** Event counts per UTC day, link and type within the range; only non-zero cells. */
export async function countEvents(db: Db, orgId: string, cardId: string, range: DayRange, shareLinkId?: string): Promise<DayCount[]> {
  const link = shareLinkId === undefined ? db`` : db`AND share_link_id = ${shareLinkId}`;
  return db<DayCount[]>`
    SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, share_link_id, event_type, count(*)::int AS count
    FROM card_events
    WHERE org_id = ${orgId} AND card_id = ${cardId} ${link}
      AND occurred_at >= (${range.from}::date)::timestamp AT TIME ZONE 'UTC'
      AND occurred_at < ((${range.to}::date + 1)::timestamp AT TIME ZONE 'UTC')
    GROUP BY 1, 2, 3`;
}
