import type Koa from 'koa';
import getRawBody from 'raw-body';
import { tooLarge } from '../../domain/errors';

/**
 * A signed webhook's body exactly as sent (the signature covers the bytes), bounded like every body.
 * Read by the route's handler itself: such routes are exempt from the JSON body reader (see app.ts).
 */
export async function readRawBody(ctx: Koa.Context, limitBytes: number): Promise<string> {
  try {
    return await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf-8' });
  } catch (error) {
    if ((error as { type?: string }).type === 'entity.too.large') throw tooLarge('Request body too large');
    throw error;
  }
}
