import type postgres from 'postgres';
import type { CardContent, MediaType } from '../domain/cards';
import type { Db } from './client';
import { columnsOf, insertColumns, setColumns } from './kit/partial-update';

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

const CARD_COLUMNS = columnsOf<CardValues>()([
  'owner_user_id',
  'name',
  'title',
  'company',
  'email',
  'phone',
  'website',
  'bio',
  'links',
  'photo_key',
  'logo_key',
  'primary_color',
  'accent_color',
  'account_id',
]);

/** The values as written: `links` as JSON. */
const written = (db: Db, values: CardValues) => ({
  ...values,
  links: values.links === undefined ? undefined : db.json(values.links as unknown as postgres.JSONValue),
});

export async function getCard(db: Db, orgId: string, id: string): Promise<CardRow | undefined> {
  const [row]: [CardRow?] = await db`
    SELECT c.*, u.external_id AS owner_external_id FROM cards c JOIN users u ON u.id = c.owner_user_id
    WHERE c.id = ${id} AND c.org_id = ${orgId}`;
  return row;
}

export async function insertCard(
  db: Db,
  orgId: string,
  id: string,
  createdBy: string,
  values: CardValues & { owner_user_id: string; name: string },
): Promise<CardRow> {
  const row = { id, org_id: orgId, created_by: createdBy, ...written(db, values) };
  await db`INSERT INTO cards ${insertColumns(db, row, ['id', 'org_id', 'created_by', ...CARD_COLUMNS])}`;
  return (await getCard(db, orgId, id))!;
}

/** Sets exactly the given columns; undefined when the organization has no such card. */
export async function updateCard(db: Db, orgId: string, id: string, values: CardValues): Promise<CardRow | undefined> {
  const [updated] = await db`
    UPDATE cards SET ${setColumns(db, written(db, values), CARD_COLUMNS)}, updated_at = now() WHERE id = ${id} AND org_id = ${orgId} RETURNING id`;
  return updated ? getCard(db, orgId, id) : undefined;
}

/** Deletes the card (its links, leads, events and media rows go with it); answers its media keys, or undefined when missing. */
export async function deleteCard(db: Db, orgId: string, id: string): Promise<string[] | undefined> {
  const media = await db<{ key: string }[]>`SELECT key FROM card_media WHERE org_id = ${orgId} AND card_id = ${id}`;
  const deleted = await db`DELETE FROM cards WHERE id = ${id} AND org_id = ${orgId}`;
  return deleted.count > 0 ? media.map((m) => m.key) : undefined;
}

export async function listCards(
  db: Db,
  orgId: string,
  filters: { ownerUserId?: string },
  page: { limit: number; offset: number },
): Promise<CardRow[]> {
  const owner = filters.ownerUserId === undefined ? db`` : db`AND c.owner_user_id = ${filters.ownerUserId}`;
  return db<CardRow[]>`
    SELECT c.*, u.external_id AS owner_external_id FROM cards c JOIN users u ON u.id = c.owner_user_id
    WHERE c.org_id = ${orgId} ${owner}
    ORDER BY c.created_at DESC, c.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** True when the card is in the organization; holds it against a concurrent delete inside a transaction. */
export async function lockCardRef(db: Db, orgId: string, id: string): Promise<boolean> {
  const [row] = await db`SELECT 1 FROM cards WHERE id = ${id} AND org_id = ${orgId} FOR KEY SHARE`;
  return row !== undefined;
}

/** Our id of a member of the organization, found by the identity provider's user id. */
export async function memberByExternalId(db: Db, orgId: string, externalId: string): Promise<string | undefined> {
  const [row]: [{ id: string }?] = await db`
    SELECT u.id FROM users u JOIN memberships m ON m.user_id = u.id
    WHERE m.org_id = ${orgId} AND u.external_id = ${externalId}`;
  return row?.id;
}

export async function insertMedia(db: Db, orgId: string, row: Omit<CardMediaRow, 'org_id' | 'created_at'>): Promise<CardMediaRow> {
  const [created] = await db<CardMediaRow[]>`INSERT INTO card_media ${db({ ...row, org_id: orgId })} RETURNING *`;
  return created!;
}

/** The media of the organization under this key, if any (a key names its card, so this also checks the card). */
export async function getMedia(db: Db, orgId: string, key: string): Promise<CardMediaRow | undefined> {
  const [row]: [CardMediaRow?] = await db`SELECT * FROM card_media WHERE key = ${key} AND org_id = ${orgId}`;
  return row;
}

/**
 * The media under an allowlisted key, whatever its organization: the public read has no organization
 * but the unguessable key. Only rows of a live card exist (they go with their card).
 */
export async function findPublicMedia(db: Db, key: string): Promise<CardMediaRow | undefined> {
  const [row]: [CardMediaRow?] = await db`SELECT * FROM card_media WHERE key = ${key}`;
  return row;
}
