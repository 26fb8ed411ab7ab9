import * as events from '../db/card-events';
import type { CardEventRow } from '../db/card-events';
import * as links from '../db/card-share-links';
import type { ShareLinkRow } from '../db/card-share-links';
import * as cards from '../db/cards';
import type { Db } from '../db/client';
import {
  CARD_EVENT_TYPES,
  SUMMARY_DEFAULT_DAYS,
  SUMMARY_MAX_DAYS,
  UTM_FIELDS,
  addDays,
  conversionRate,
  eachDay,
  zeroCounts,
  type CardEventType,
  type EventCounts,
  type Utm,
} from '../domain/cards';
import { notFound, unprocessable } from '../domain/errors';
import { newId } from '../platform/core/ids';
import { cardNotFound } from './cards';
import type { ServiceDeps } from './deps';

/** One attribution event of a share link: the link's source label, UTM, cleaned referrer and time; never an address. */
export async function recordCardEvent(
  db: Db,
  link: Pick<ShareLinkRow, 'id' | 'org_id' | 'card_id' | 'source'>,
  type: CardEventType,
  attribution: { utm: Utm; referrer: string | null },
  detail: Record<string, unknown> = {},
): Promise<void> {
  await events.insertEvent(db, link.org_id, {
    id: newId(),
    card_id: link.card_id,
    share_link_id: link.id,
    event_type: type,
    source: link.source,
    utm_source: attribution.utm.utm_source ?? null,
    utm_medium: attribution.utm.utm_medium ?? null,
    utm_campaign: attribution.utm.utm_campaign ?? null,
    utm_term: attribution.utm.utm_term ?? null,
    utm_content: attribution.utm.utm_content ?? null,
    referrer: attribution.referrer,
    detail,
  });
}

const eventView = (row: CardEventRow) => ({
  id: row.id,
  card_id: row.card_id,
  share_link_id: row.share_link_id,
  event_type: row.event_type,
  source: row.source,
  ...Object.fromEntries(UTM_FIELDS.map((f) => [f, row[f]])),
  referrer: row.referrer,
  detail: row.detail,
  occurred_at: row.occurred_at.toISOString(),
});

async function checkScope(sql: Db, orgId: string, cardId: string, shareLinkId?: string): Promise<void> {
  if (!(await cards.getCard(sql, orgId, cardId))) throw cardNotFound();
  if (shareLinkId && !(await links.getShareLink(sql, orgId, cardId, shareLinkId))) throw notFound('Share link not found');
}

export async function listCardEvents(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  cardId: string,
  query: { share_link_id?: string; event_type?: CardEventType; limit: number; offset: number },
) {
  await checkScope(deps.sql, orgId, cardId, query.share_link_id);
  const page = { limit: query.limit, offset: query.offset };
  const rows = await events.listEvents(deps.sql, orgId, cardId, { shareLinkId: query.share_link_id, eventType: query.event_type }, page);
  return { events: rows.map(eventView), ...page };
}

/** The summarized days: `to` defaults to today (UTC), `from` to 29 days before it; at most a year. */
function dayRange(query: { from?: string; to?: string }): events.DayRange {
  const to = query.to ?? new Date().toISOString().slice(0, 10);
  const from = query.from ?? addDays(to, -(SUMMARY_DEFAULT_DAYS - 1));
  if (from > to) throw unprocessable([{ loc: ['query', 'from'], msg: 'from must not be after to' }]);
  // Counted, not listed: a range of centuries is refused without making its days.
  if ((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1 > SUMMARY_MAX_DAYS)
    throw unprocessable([{ loc: ['query', 'from'], msg: `at most ${SUMMARY_MAX_DAYS} days per summary` }]);
  return { from, to };
}

function tally(rows: events.DayCount[]): EventCounts {
  const counts = zeroCounts();
  for (const r of rows) counts[r.event_type] += r.count;
  return counts;
}

function byDay(range: events.DayRange, rows: events.DayCount[]) {
  const days = new Map(eachDay(range.from, range.to).map((d) => [d, zeroCounts()]));
  for (const r of rows) days.get(r.day)![r.event_type] += r.count;
  return [...days].map(([date, counts]) => ({ date, ...counts, conversion_rate: conversionRate(counts) }));
}

/**
 * Conversion attribution of a card (or of one of its links): counts per event type, the view → lead
 * conversion rate, every day of the range (zeros included) and, for a card, the same per link.
 */
export async function summarizeCardEvents(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  cardId: string,
  query: { from?: string; to?: string; share_link_id?: string },
) {
  await checkScope(deps.sql, orgId, cardId, query.share_link_id);
  const range = dayRange(query);
  const rows = await events.countEvents(deps.sql, orgId, cardId, range, query.share_link_id);
  const totals = tally(rows);
  const summary = {
    card_id: cardId,
    share_link_id: query.share_link_id ?? null,
    from: range.from,
    to: range.to,
    event_types: [...CARD_EVENT_TYPES],
    totals,
    conversion_rate: conversionRate(totals),
    by_day: byDay(range, rows),
  };
  if (query.share_link_id) return summary;
  const cardLinks = await links.listShareLinks(deps.sql, orgId, cardId);
  const by_link = cardLinks.map((link) => {
    const counts = tally(rows.filter((r) => r.share_link_id === link.id));
    return { share_link_id: link.id, source: link.source, totals: counts, conversion_rate: conversionRate(counts) };
  });
  return { ...summary, by_link };
}
