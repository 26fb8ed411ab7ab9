import type Koa from 'koa';
import { invalid, tooLarge, unsupportedMedia } from '../../domain/errors';
import { withDeadlinePaused } from '../../platform/core/request-scope';
import { checkBodyText } from './request-text';

export interface JsonBodyOptions {
  limitBytes: number;
  maxDepth: number;
}

/**
 * The JSON request body, read and checked before anything looks at it: at most `limitBytes` (413 from
 * the declared Content-Length before a byte is read, else counted while streaming, so a body without
 * Content-Length is bounded too), UTF-8 only (another declared charset is 415, invalid bytes are 400,
 * never replaced by U+FFFD; nor is a lone UTF-16 surrogate escape taken), nested at most `maxDepth` levels (400, checked on the text before
 * JSON.parse, so neither validation nor the 422 echo ever recurses through a hostile body). Malformed
 * JSON keeps the 422 `json_invalid` answer. Sets `ctx.request.body` (the value) and
 * `ctx.request.rawBody` (the text, for signature checks). The route wrapper (api/route.ts) calls it
 * once the caller is authenticated and allowed, so a refused caller's body is never read.
 */
export async function readJsonBody(ctx: Koa.Context, options: JsonBodyOptions): Promise<void> {
  if (ctx.disableBodyParser || !ctx.request.is('json', '+json')) return;
  if (Number(ctx.get('Content-Length') || 0) > options.limitBytes) throw tooLarge('Request body too large');
  const charset = ctx.request.charset.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8')
    throw unsupportedMedia(`Unsupported charset '${charset}': request bodies must be UTF-8`);
  // A slow client is bounded by the limit and the server's timeouts, not by the request's deadline.
  const bytes = await withDeadlinePaused(() => readLimited(ctx.req, options.limitBytes));
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw invalid('Request body is not valid UTF-8');
  }
  if (jsonDepthExceeds(text, options.maxDepth)) throw invalid(`JSON nested deeper than ${options.maxDepth} levels`);
  const request = ctx.request as { body?: unknown; rawBody?: string };
  const body = parseStrict(text);
  checkBodyText(body, text); // a lone surrogate 400, U+0000 422 naming the field
  request.rawBody = text;
  request.body = body;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

async function readLimited(stream: AsyncIterable<Buffer>, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge('Request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * True when the JSON text opens more than `maxDepth` arrays or objects at once. One pass over the
 * characters, skipping string contents (with their escapes); it never recurses, whatever the input.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Like the body parser it replaces: empty is `{}`, the top level must be an object or an array. */
function parseStrict(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return {};
  if (trimmed[0] !== '{' && trimmed[0] !== '[') throw parseFailed('Only a JSON object or array is accepted');
  try {
    return JSON.parse(trimmed);
  } catch (error) {
    throw parseFailed((error as Error).message);
  }
}

/** The shape the error handler answers as 422 `json_invalid`. */
const parseFailed = (message: string) => Object.assign(new SyntaxError(message), { status: 400, type: 'entity.parse.failed' });
