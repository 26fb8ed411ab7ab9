import { z } from 'zod';
import {
  LengthMismatchError,
  ObjectExistsError,
  ObjectTooLargeError,
  StorageError,
  contentDisposition,
  verifyLocalSignature,
  type SignedRequest,
} from '../../platform/adapters/storage';
import type { AppDeps } from '../deps';
import { HttpError, badGateway, badRequest, conflict, forbidden, notFound } from '../errors';
import { reply, type Routes } from '../route';
import { ErrorBody } from '../schemas/common';

// The local-disk driver's stand-in for S3 presigned URLs. Callers hold no token, only the URL the
// service signed; the key arrives url-encoded as one path segment, slashes included.

const KeyParams = z.object({ key: z.string().min(1) });
// Repeated parameters are let through and treated as absent, so any bad URL is the same 403.
const loose = z.union([z.string(), z.array(z.string())]).optional();
const SignedQuery = z.object({
  method: loose,
  expires: loose,
  signature: loose,
  content_type: loose,
  filename: loose,
  content_length: loose,
  max_bytes: loose,
  if_none_match: loose,
});
const UploadHeaders = z.object({
  'if-none-match': z
    .string()
    .optional()
    .openapi({ description: '`*`: required by a URL that carries if_none_match=* (it only creates its object, never replaces one)' }),
});
const single = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

const refused = () => forbidden('Invalid or expired signature');
const alreadyUsed = () => conflict('This upload URL was already used: the object exists and is never replaced');
const denied = { 403: { description: 'Invalid or expired signature', schema: ErrorBody } } as const;

/** The signed request the URL describes, or 403 when its signature does not hold. */
function signedRequest(deps: AppDeps, method: 'GET' | 'PUT', key: string, query: z.output<typeof SignedQuery>): SignedRequest {
  const request: SignedRequest = {
    method,
    key,
    expires: single(query.expires),
    signature: single(query.signature),
    contentType: single(query.content_type),
    filename: single(query.filename),
    contentLength: single(query.content_length),
    maxBytes: single(query.max_bytes),
    ifNoneMatch: single(query.if_none_match),
  };
  if (single(query.method) !== method || !verifyLocalSignature(deps.storage, request)) throw refused();
  return request;
}

async function storageCall<T>(deps: AppDeps, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    // Nothing was stored in either case: the body broke what the URL allows.
    if (error instanceof ObjectTooLargeError) throw new HttpError(413, 'Upload larger than this URL allows');
    if (error instanceof LengthMismatchError) throw badRequest('Upload length differs from the length this URL was issued for');
    if (error instanceof ObjectExistsError) throw alreadyUsed();
    if (!(error instanceof StorageError)) throw error;
    deps.logger.error({ err: error }, 'object storage failed');
    throw badGateway('Object storage unavailable');
  }
}

export function registerObjectRoutes(routes: Routes, deps: AppDeps): void {
  if (deps.storage.driver !== 'local') return;

  routes.add({
    method: 'put',
    path: '/storage/objects/{key}',
    tag: 'CRM',
    summary: 'Upload an object through a presigned URL (local storage only)',
    auth: 'public',
    params: KeyParams,
    query: SignedQuery,
    documented: { headers: UploadHeaders },
    responses: {
      200: { description: 'Stored', schema: z.object({}) },
      400: { description: 'Content-Length or the body differs from the length the URL binds', schema: ErrorBody },
      ...denied,
      409: {
        description: 'A create-only URL (signed for If-None-Match: *) whose object exists: it was used already; nothing is written',
        schema: ErrorBody,
      },
      413: { description: 'Body larger than the URL allows (its declared length or the maximum file size)', schema: ErrorBody },
    },
    handler: async ({ params, query, ctx }) => {
      const signed = signedRequest(deps, 'PUT', params.key, query);
      const sentType = ctx.get('Content-Type') || undefined;
      // As with S3, a signed content type binds the upload's Content-Type header.
      if (signed.contentType !== undefined && sentType !== signed.contentType) throw refused();
      // Likewise a URL signed for If-None-Match: * needs the header, and only ever creates its object:
      // once used (and confirmed) it is refused before a byte of the body is read.
      const createOnly = signed.ifNoneMatch !== undefined;
      if (createOnly && (signed.ifNoneMatch !== '*' || ctx.get('If-None-Match') !== '*')) throw refused();
      if (createOnly && (await storageCall(deps, () => deps.storage.head(params.key)))) throw alreadyUsed();
      // The JSON body parser has already read a JSON upload; anything else is still on the socket.
      const parsed = (ctx.request as { rawBody?: string }).rawBody;
      const length = ctx.get('Content-Length') ? Number(ctx.get('Content-Length')) : undefined;
      const bound = signed.contentLength === undefined ? undefined : Number(signed.contentLength);
      const maxBytes = signed.maxBytes === undefined ? undefined : Number(signed.maxBytes);
      // A declared length over the bound is refused before a byte is read.
      if (length !== undefined && length > Math.min(bound ?? Infinity, maxBytes ?? Infinity))
        throw new HttpError(413, 'Upload larger than this URL allows');
      if (length !== undefined && bound !== undefined && length !== bound)
        throw badRequest('Upload length differs from the length this URL was issued for');
      await storageCall(deps, () =>
        deps.storage.put(params.key, parsed ?? ctx.req, {
          contentType: signed.contentType ?? sentType,
          contentLength: bound ?? (parsed === undefined ? length : undefined),
          maxBytes,
          createOnly,
        }),
      );
      return reply(200, {});
    },
  });

  routes.add({
    method: 'get',
    path: '/storage/objects/{key}',
    tag: 'CRM',
    summary: 'Download an object through a presigned URL (local storage only)',
    auth: 'public',
    params: KeyParams,
    query: SignedQuery,
    responses: {
      200: { description: 'The object', contentType: 'application/octet-stream', schema: z.string() },
      ...denied,
      404: { description: 'No such object', schema: ErrorBody },
    },
    handler: async ({ params, query }) => {
      const signed = signedRequest(deps, 'GET', params.key, query);
      const object = await storageCall(deps, () => deps.storage.get(params.key));
      if (!object) throw notFound();
      // Content-Type as a plain header: Koa's ctx.type would append a charset the uploader never sent.
      const headers: Record<string, string> = {
        'Content-Type': object.contentType ?? 'application/octet-stream',
        'Content-Length': String(object.size),
      };
      if (object.etag) headers.ETag = `"${object.etag}"`;
      if (object.lastModified) headers['Last-Modified'] = object.lastModified.toUTCString();
      if (signed.filename !== undefined) headers['Content-Disposition'] = contentDisposition(signed.filename);
      return reply(200, object.body, headers);
    },
  });
}
