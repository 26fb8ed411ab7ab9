import type { Readable } from 'node:stream';
import * as cards from '../db/cards';
import { mediaKey, parseMediaKey, sniffImageType, type MediaType } from '../domain/cards';
import { notFound, tooLarge, unsupportedMedia } from '../domain/errors';
import { publicBaseUrl } from '../platform/core/config';
import { newId } from '../platform/core/ids';
import type { ServiceDeps } from './deps';

export const MEDIA_CONTENT_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const satisfies readonly MediaType[];

/** The whole body, refused with 413 as soon as it passes `limitBytes` (whatever its Content-Length said). */
async function readLimited(stream: AsyncIterable<Buffer>, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge(`Image larger than ${limitBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Stores one image of a card under a new allowlisted key. The bytes must really be the declared
 * PNG, JPEG or WebP (415 otherwise), so a public key never serves anything but an image.
 */
export async function uploadCardMedia(
  deps: Pick<ServiceDeps, 'sql' | 'storage' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  cardId: string,
  upload: { contentType: string; body: Readable },
) {
  const declared = upload.contentType.split(';')[0]!.trim().toLowerCase();
  if (!(MEDIA_CONTENT_TYPES as readonly string[]).includes(declared))
    throw unsupportedMedia('Card images must be image/png, image/jpeg or image/webp');
  if (!(await cards.getCard(deps.sql, orgId, cardId))) throw notFound('Card not found');
  const bytes = await readLimited(upload.body, deps.config.CARD_MEDIA_MAX_BYTES);
  if (bytes.length === 0) throw unsupportedMedia('Empty body: send the image bytes');
  if (sniffImageType(bytes) !== declared) throw unsupportedMedia(`The body is not a ${declared} image`);
  const type = declared as MediaType;
  const key = mediaKey(cardId, newId(), type);
  await deps.storage.put(key, bytes, { contentType: type, contentLength: bytes.length });
  try {
    const row = await deps.sql.begin(async (tx) => {
      if (!(await cards.lockCardRef(tx, orgId, cardId))) throw notFound('Card not found');
      return cards.insertMedia(tx, orgId, { key, card_id: cardId, content_type: type, size_bytes: bytes.length, created_by: actor });
    });
    return {
      key: row.key,
      url: `${publicBaseUrl(deps.config)}/media/${row.key}`,
      content_type: row.content_type,
      size_bytes: row.size_bytes,
      created_at: row.created_at.toISOString(),
    };
  } catch (error) {
    await removeMediaObjects(deps, [key]); // the card went away meanwhile: no orphan object
    throw error;
  }
}

/**
 * An image for anyone, by key: only a key of the allowlisted shape (`cards/<uuid>/<uuid>.<png|jpg|webp>`)
 * that was uploaded for a card that still exists; anything else is the same 404, before storage is
 * touched. The content type comes from the key, never from what the store says.
 */
export async function readPublicMedia(deps: Pick<ServiceDeps, 'sql' | 'storage'>, key: string) {
  const shape = parseMediaKey(key);
  if (!shape) throw notFound();
  const media = await cards.findPublicMedia(deps.sql, key);
  if (!media || media.content_type !== shape.contentType) throw notFound();
  const object = await deps.storage.get(key);
  if (!object) throw notFound();
  return { body: object.body, contentType: shape.contentType, size: object.size, etag: object.etag };
}

/** Best effort: the rows are gone already, so a failed delete only leaves an unreachable object, logged. */
export async function removeMediaObjects(deps: Pick<ServiceDeps, 'storage' | 'logger'>, keys: string[]): Promise<void> {
  const results = await Promise.allSettled(keys.map((key) => deps.storage.delete(key)));
  results.forEach((r, i) => {
    if (r.status === 'rejected') deps.logger.warn({ err: r.reason, storage_key: keys[i] }, 'could not delete a card image');
  });
}
