import crypto from 'node:crypto';
import { lockAccountRef } from '../db/accounts';
import * as shareLinks from '../db/card-share-links';
import * as cards from '../db/cards';
import type { CardRow, CardValues } from '../db/cards';
import type { Db } from '../db/client';
import { renderSignatureHtml, renderSignatureText, signatureDocument, type SignatureOptions } from '../domain/card-signature';
import { SIGNATURE_LINK_QUERY, SIGNATURE_LINK_SOURCE, type CardContent, type CardLink } from '../domain/cards';
import { invalid, notFound } from '../domain/errors';
import { publicBaseUrl } from '../platform/core/config';
import { newId } from '../platform/core/ids';
import type { ServiceDeps } from './deps';
import { removeMediaObjects } from './public-media';

/** The public URL of an allowlisted media key (served by GET /media/...). */
export const mediaUrl = (deps: Pick<ServiceDeps, 'config'>, key: string | null): string | null =>
  key === null ? null : `${publicBaseUrl(deps.config)}/media/${key}`;

export function cardView(deps: Pick<ServiceDeps, 'config'>, row: CardRow) {
  return {
    ...cardContent(deps, row),
    owner_id: row.owner_external_id,
    photo_key: row.photo_key,
    logo_key: row.logo_key,
    account_id: row.account_id,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** What the renderings (signature, vCard, share page) read of a card. */
export function cardContent(deps: Pick<ServiceDeps, 'config'>, row: CardRow): CardContent {
  return {
    id: row.id,
    name: row.name,
    title: row.title,
    company: row.company,
    email: row.email,
    phone: row.phone,
    website: row.website,
    bio: row.bio,
    links: row.links,
    photo_url: mediaUrl(deps, row.photo_key),
    logo_url: mediaUrl(deps, row.logo_key),
    primary_color: row.primary_color,
    accent_color: row.accent_color,
  };
}

export const cardNotFound = () => notFound('Card not found');

export interface CardInput {
  owner_id?: string;
  name?: string;
  title?: string | null;
  company?: string | null;
  email?: string | null;
  phone?: string | null;
  website?: string | null;
  bio?: string | null;
  links?: CardLink[];
  photo_key?: string | null;
  logo_key?: string | null;
  primary_color?: string;
  accent_color?: string;
  account_id?: string | null;
}

/**
 * The columns of an input, with its references checked inside the write's transaction: the owner must
 * be a member of the organization, the account one of its accounts (held until commit), and an image
 * key one uploaded for this very card (so deleting another card never breaks this one). Each is 404.
 */
async function resolve(tx: Db, orgId: string, cardId: string, input: CardInput): Promise<CardValues> {
  const { owner_id, ...rest } = input;
  const values: CardValues = { ...rest };
  if (owner_id !== undefined) {
    const userId = await cards.memberByExternalId(tx, orgId, owner_id);
    if (!userId) throw notFound('Owner not found in the organization');
    values.owner_user_id = userId;
  }
  if (input.account_id && !(await lockAccountRef(tx, orgId, input.account_id))) throw notFound('Account not found');
  for (const key of [input.photo_key, input.logo_key]) {
    if (!key) continue;
    const media = await cards.getMedia(tx, orgId, key);
    if (!media || media.card_id !== cardId) throw notFound(`Media not found on this card: ${key}`);
  }
  return values;
}

export async function createCard(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  caller: { userId: string; actor: string },
  input: CardInput & { name: string },
) {
  const id = newId();
  const row = await deps.sql.begin(async (tx) => {
    const values = await resolve(tx, orgId, id, input);
    const card = await cards.insertCard(tx, orgId, id, caller.actor, {
      ...values,
      owner_user_id: values.owner_user_id ?? caller.userId,
      name: input.name,
    });
    // The link the email signature opens the card through (see renderSignature).
    await shareLinks.insertShareLink(tx, orgId, id, {
      id: newId(),
      token: crypto.randomBytes(16).toString('base64url'),
      source: SIGNATURE_LINK_SOURCE,
      expires_at: null,
      created_by: caller.actor,
    });
    return card;
  });
  return cardView(deps, row);
}

export async function getCard(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, cardId: string) {
  const row = await cards.getCard(deps.sql, orgId, cardId);
  if (!row) throw cardNotFound();
  return cardView(deps, row);
}

export async function listCards(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  query: { owner_id?: string; limit: number; offset: number },
) {
  const page = { limit: query.limit, offset: query.offset };
  if (query.owner_id === undefined)
    return { cards: (await cards.listCards(deps.sql, orgId, {}, page)).map((r) => cardView(deps, r)), ...page };
  const ownerUserId = await cards.memberByExternalId(deps.sql, orgId, query.owner_id);
  const rows = ownerUserId ? await cards.listCards(deps.sql, orgId, { ownerUserId }, page) : [];
  return { cards: rows.map((r) => cardView(deps, r)), ...page };
}

export async function updateCard(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, cardId: string, patch: CardInput) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send at least one field');
  const row = await deps.sql.begin(async (tx) => {
    if (!(await cards.lockCardRef(tx, orgId, cardId))) throw cardNotFound();
    return cards.updateCard(tx, orgId, cardId, await resolve(tx, orgId, cardId, patch));
  });
  if (!row) throw cardNotFound();
  return cardView(deps, row);
}

/** Deletes the card with its links, leads, events and media rows; then its images (best effort). */
export async function deleteCard(deps: Pick<ServiceDeps, 'sql' | 'storage' | 'logger'>, orgId: string, cardId: string): Promise<void> {
  const keys = await deps.sql.begin((tx) => cards.deleteCard(tx, orgId, cardId));
  if (!keys) throw cardNotFound();
  await removeMediaObjects(deps, keys);
}

export type SignatureFormat = 'html' | 'fragment' | 'text';

/** The signature rendered from the card as it is now; nothing is stored or cached. */
export async function renderSignature(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  orgId: string,
  cardId: string,
  format: SignatureFormat,
  options: SignatureOptions,
): Promise<{ body: string; contentType: string }> {
  const row = await cards.getCard(deps.sql, orgId, cardId);
  if (!row) throw cardNotFound();
  const content = cardContent(deps, row);
  // Through the card's signature share link, so views that come from signatures are attributed.
  const link = await shareLinks.findSignatureLink(deps.sql, orgId, cardId, SIGNATURE_LINK_SOURCE);
  const cardUrl = link ? `${publicBaseUrl(deps.config)}/share/${link.token}${SIGNATURE_LINK_QUERY}` : null;
  if (format === 'text') return { body: renderSignatureText(content, options, cardUrl), contentType: 'text/plain; charset=utf-8' };
  const fragment = renderSignatureHtml(content, options, cardUrl);
  return { body: format === 'fragment' ? fragment : signatureDocument(content, fragment), contentType: 'text/html; charset=utf-8' };
}
