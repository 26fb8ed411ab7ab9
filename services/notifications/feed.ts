import * as db from '../../db/notifications';
import { notFound } from '../../domain/errors';
import type { ServiceDeps } from '../deps';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';

// The user's in-app feed: list, unread count, read and archive.

export function itemView(row: db.ItemRow) {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    category: row.category,
    entity_type: row.entity_type,
    entity_id: row.entity_id,
    title: row.title,
    body: row.body,
    payload: row.payload,
    read: row.read_at !== null,
    read_at: row.read_at?.toISOString() ?? null,
    archived_at: row.archived_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

const itemNotFound = () => notFound('Notification not found');

/** Newest first; the cursor carries the last item's time and id. */
export async function listFeed(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  userId: string,
  q: { unread: boolean; cursor?: string; limit: number },
) {
  const after = decodeCursor(q.cursor, CreatedCursor);
  const [rows, total] = await Promise.all([
    db.listItems(deps.sql, orgId, userId, { unread: q.unread, after, limit: q.limit + 1 }),
    db.countItems(deps.sql, orgId, userId, q.unread),
  ]);
  return cursorPage(rows.map(itemView), q.limit, total, (last) => ({ t: last.created_at, id: last.id }));
}

export async function unreadCount(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string) {
  return { unread: await db.countItems(deps.sql, orgId, userId, true) };
}

export async function markRead(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string, itemId: string) {
  const row = await db.markItemRead(deps.sql, orgId, userId, itemId);
  if (!row) throw itemNotFound();
  return itemView(row);
}

export async function markAllRead(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string) {
  return { updated: await db.markAllRead(deps.sql, orgId, userId) };
}

export async function archive(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string, itemId: string) {
  const row = await db.archiveItem(deps.sql, orgId, userId, itemId);
  if (!row) throw itemNotFound();
  return itemView(row);
}
