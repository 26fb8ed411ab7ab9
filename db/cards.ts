import type postgres from 'postgres';
import type { CardContent, MediaType } from '../domain/cards';
import type { Db } from './client';

/** A card's content as stored: images as storage keys (a rendering turns them into URLs). */
export interface CardRow extends Omit<CardContent, 'photo_url' | 'logo_url'> {
  org_id: string;
  owner_user_id: string;
  /** The owner's id at the identity provider (users.external_id), as the API names users. */
  owner_external_id: string;
  photo_key: string | null;
  logo_key: string | null;
  account_id: string | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

/** The columns a caller may write. */
export type CardValues = Partial<
  Pick<
    CardRow,
    | 'owner_user_id'
    | 'name'
    | 'title'
    | 'company'
    | 'email'
    | 'phone'
    | 'website'
    | 'bio'
    | 'links'
    | 'photo_key'
    | 'logo_key'
    | 'primary_color'
    | 'accent_color'
    | 'account_id'
  >
>;

export interface CardMediaRow {
  key: string;
  org_id: string;
  card_id: string;
  content_type: MediaType;
  size_bytes: number;
  created_by: string;
  created_at: Date;
}

function columns(sql: Db, values: CardValues) {
  const set: Record<string, unknown> = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined));
  if (set.links !== undefined) set.links = sql.json(set.links as postgres.JSONValue);
  return set as Record<string, postgres.ParameterOrJSON<never>>;
}

export async function getCard(sql: Db, orgId: string, id: string): Promise<CardRow | undefined> {
  const [row]: [CardRow?] = await sql`
    SELECT c.*, u.external_id AS owner_external_id FROM cards c JOIN users u ON u.id = c.owner_user_id
    WHERE c.id = ${id} AND c.org_id = ${orgId}`;
  return row;
}

export async function insertCard(
  sql: Db,
  orgId: string,
  id: string,
  createdBy: string,
  values: CardValues & { owner_user_id: string; name: string },
): Promise<CardRow> {
  const row = { id, org_id: orgId, created_by: createdBy, ...columns(sql, values) };
  await sql`INSERT INTO cards ${sql(row)}`;
  return (await getCard(sql, orgId, id))!;
}

/** Sets exactly the given columns; undefined when the organization has no such card. */
export async function updateCard(sql: Db, orgId: string, id: string, values: CardValues): Promise<CardRow | undefined> {
  const [updated] =
    await sql`UPDATE cards SET ${sql(columns(sql, values))}, updated_at = now() WHERE id = ${id} AND org_id = ${orgId} RETURNING id`;
  return updated ? getCard(sql, orgId, id) : undefined;
}

/** Deletes the card (its links, leads, events and media rows go with it); answers its media keys, or undefined when missing. */
export async function deleteCard(sql: Db, orgId: string, id: string): Promise<string[] | undefined> {
  const media = await sql<{ key: string }[]>`SELECT key FROM card_media WHERE org_id = ${orgId} AND card_id = ${id}`;
  const deleted = await sql`DELETE FROM cards WHERE id = ${id} AND org_id = ${orgId}`;
  return deleted.count > 0 ? media.map((m) => m.key) : undefined;
}

export async function listCards(
  sql: Db,
  orgId: string,
  filters: { ownerUserId?: string },
  page: { limit: number; offset: number },
): Promise<CardRow[]> {
  const owner = filters.ownerUserId === undefined ? sql`` : sql`AND c.owner_user_id = ${filters.ownerUserId}`;
  return sql<CardRow[]>`
    SELECT c.*, u.external_id AS owner_external_id FROM cards c JOIN users u ON u.id = c.owner_user_id
    WHERE c.org_id = ${orgId} ${owner}
    ORDER BY c.created_at DESC, c.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** True when the card is in the organization; holds it against a concurrent delete inside a transaction. */
export async function lockCardRef(sql: Db, orgId: string, id: string): Promise<boolean> {
  const [row] = await sql`SELECT 1 FROM cards WHERE id = ${id} AND org_id = ${orgId} FOR KEY SHARE`;
  return row !== undefined;
}

/** Our id of a member of the organization, found by the identity provider's user id. */
export async function memberByExternalId(sql: Db, orgId: string, externalId: string): Promise<string | undefined> {
  const [row]: [{ id: string }?] = await sql`
    SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id
    WHERE m.org_id = ${orgId} AND u.external_id = ${externalId}`;
  return row?.id;
}

export async function insertMedia(sql: Db, orgId: string, row: Omit<CardMediaRow, 'org_id' | 'created_at'>): Promise<CardMediaRow> {
  const [created] = await sql<CardMediaRow[]>`INSERT INTO card_media ${sql({ ...row, org_id: orgId })} RETURNING *`;
  return created!;
}

/** The media of the organization under this key, if any (a key names its card, so this also checks the card). */
export async function getMedia(sql: Db, orgId: string, key: string): Promise<CardMediaRow | undefined> {
  const [row]: [CardMediaRow?] = await sql`SELECT * FROM card_media WHERE key = ${key} AND org_id = ${orgId}`;
  return row;
}

/**
 * The media under an allowlisted key, whatever its organization: the public read has no organization
 * but the unguessable key. Only rows of a live card exist (they go with their card).
 */
export async function findPublicMedia(sql: Db, key: string): Promise<CardMediaRow | undefined> {
  const [row]: [CardMediaRow?] = await sql`SELECT * FROM card_media WHERE key = ${key}`;
  return row;
}
