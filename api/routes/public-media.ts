import { z } from 'zod';
import * as media from '../../services/public-media';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { CardMedia, CardParams, MediaParams } from '../schemas/cards';

// Card images: uploaded with a token of the card's organization, read by anyone, but only under a key
// of the allowlisted shape cards/<card_id>/<uuid>.<png|jpg|webp> that was uploaded for a live card.
// Any other path is the same 404: there is no listing, and a key is never a file system path.

const TAG = 'Public Media' as const;

export function registerPublicMediaRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/cards/{card_id}/media',
    tag: TAG,
    summary: 'Upload a card image (the raw PNG, JPEG or WebP bytes as the body); set its key as photo_key or logo_key',
    auth: { scope: 'crmManage' },
    params: CardParams,
    documented: { body: z.string().openapi({ format: 'binary' }), bodyContentTypes: [...media.MEDIA_CONTENT_TYPES] },
    responses: {
      200: { description: 'The stored image and its public URL', schema: CardMedia },
      ...authErrors,
      ...notFoundError,
      413: { description: 'Larger than CARD_MEDIA_MAX_BYTES', schema: ErrorBody },
      415: { description: 'Not a PNG, JPEG or WebP image, or bytes that do not match the Content-Type', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params, auth, ctx }) =>
      reply(
        200,
        await media.uploadCardMedia(deps, orgOf(auth), actor(auth), params.card_id, {
          contentType: ctx.get('Content-Type'),
          body: ctx.req,
        }),
      ),
  });

  routes.add({
    method: 'get',
    path: '/media/cards/{card_id}/{file}',
    tag: TAG,
    summary: 'A card image, for anyone; cached for a year (keys never change content)',
    auth: 'public',
    params: MediaParams,
    // Links shared on social sites get tracking parameters (fbclid, gclid) appended: ignored, as on /share.
    query: z.looseObject({}),
    responses: {
      200: { description: 'The image', schema: z.string().openapi({ format: 'binary' }), contentType: [...media.MEDIA_CONTENT_TYPES] },
      404: { description: 'No image under this key (a small HTML page instead when the request prefers text/html)', schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ params }) => {
      const image = await media.readPublicMedia(deps, `cards/${params.card_id}/${params.file}`);
      return reply(
        200,
        image.body,
        {
          'Content-Length': String(image.size),
          'Cache-Control': 'public, max-age=31536000, immutable',
          'X-Content-Type-Options': 'nosniff',
          'Content-Security-Policy': "default-src 'none'",
          ...(image.etag ? { ETag: image.etag } : {}),
        },
        image.contentType,
      );
    },
  });
}
