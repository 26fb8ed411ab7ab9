import type Koa from 'koa';
import { invalid, tooLarge, unprocessable, unsupportedMedia } from '../../domain/errors';
import { publicBaseUrl, type Config } from '../../platform/core/config';
import { withDeadlinePaused } from '../../platform/core/request-scope';

// A plain HTML form's body (application/x-www-form-urlencoded), read by the route that takes it, with
// the JSON reader's guarantees: bounded (413 from the declared Content-Length before a byte is read,
// else while streaming), UTF-8 only (another charset 415, invalid bytes or percent-escapes 400).

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The fields of the form; a field sent twice keeps its first value (as a browser sends each once). */
export async function readFormBody(ctx: Koa.Context, limitBytes: number): Promise<Record<string, string>> {
  if (Number(ctx.get('Content-Length') || 0) > limitBytes) throw tooLarge('Request body too large');
  const charset = ctx.request.charset.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8')
    throw unsupportedMedia(`Unsupported charset '${charset}': request bodies must be UTF-8`);
  const bytes = await withDeadlinePaused(async () => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) throw tooLarge('Request body too large');
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, size);
  });
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw invalid('Request body is not valid UTF-8');
  }
  const fields = new Map<string, string>();
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const [name, value] = at < 0 ? [pair, ''] : [pair.slice(0, at), pair.slice(at + 1)];
    let key: string;
    let decoded: string;
    try {
      key = decodeURIComponent(name.replace(/\+/g, ' '));
      decoded = decodeURIComponent(value.replace(/\+/g, ' '));
    } catch {
      throw invalid('Request body is not valid UTF-8');
    }
    if (key.includes('\u0000') || decoded.includes('\u0000'))
      throw unprocessable([{ loc: ['body', key.replace(/\u0000/g, '')], msg: 'Text must not contain the NUL character (U+0000)' }]);
    if (!fields.has(key)) fields.set(key, decoded);
  }
  // Own properties only (a field named __proto__ is a field like any other).
  return Object.fromEntries(fields);
}

/**
 * A Twilio request as Twilio signed it: its form, the URL it requested (the service's public address, path
 * and query as sent) and its X-Twilio-Signature.
 */
export async function readTwilioRequest(
  config: Pick<Config, 'BODY_LIMIT_BYTES' | 'PUBLIC_BASE_URL' | 'PORT'>,
  ctx: Koa.Context,
): Promise<{ params: Record<string, string>; url: string; signature: string }> {
  return {
    params: await readFormBody(ctx, config.BODY_LIMIT_BYTES),
    url: `${publicBaseUrl(config).replace(/\/+$/, '')}${ctx.originalUrl}`,
    signature: ctx.get('x-twilio-signature'),
  };
}
