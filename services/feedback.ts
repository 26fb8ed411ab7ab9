import * as db from '../db/feedback';
import { rateLimited } from '../domain/errors';
import type { FeedbackCategory } from '../domain/feedback';
import type { Config } from '../platform/config';
import { newId } from '../platform/ids';
import { RateLimiter } from '../platform/rate-limit';
import type { ServiceDeps } from './deps';
import { CreatedCursor, decodeCursor, encodeCursor } from './pagination';

// Feedback: any signed-in user, with or without an active organization (kept as context), limited per
// user; read only by the service's operators.

const limiters = new Map<string, RateLimiter>();

function limiterFor(config: Pick<Config, 'FEEDBACK_PER_USER' | 'FEEDBACK_WINDOW_SECONDS'>): RateLimiter {
  const key = `${config.FEEDBACK_PER_USER}|${config.FEEDBACK_WINDOW_SECONDS}`;
  let limiter = limiters.get(key);
  if (!limiter) {
    limiter = new RateLimiter({ limit: config.FEEDBACK_PER_USER, windowSeconds: config.FEEDBACK_WINDOW_SECONDS });
    limiters.set(key, limiter);
  }
  return limiter;
}

export interface FeedbackInput {
  message: string;
  category: FeedbackCategory;
  rating?: number;
  context?: Record<string, unknown>;
}

export async function submitFeedback(deps: Pick<ServiceDeps, 'sql' | 'config'>, caller: { userId: string; orgId: string | null }, input: FeedbackInput) {
  const taken = limiterFor(deps.config).take(caller.userId);
  if (!taken.ok) throw rateLimited('Too much feedback from this user; try again later', taken.retryAfterSeconds);
  const row = await db.insertFeedback(deps.sql, newId(), {
    userId: caller.userId,
    orgId: caller.orgId,
    category: input.category,
    message: input.message,
    rating: input.rating ?? null,
    context: input.context ?? {},
  });
  return { id: row.id, created_at: row.created_at.toISOString() };
}

export async function listFeedback(deps: Pick<ServiceDeps, 'sql'>, query: { category?: FeedbackCategory; organization_id?: string; limit: number; cursor?: string }) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const rows = await db.listFeedback(deps.sql, { category: query.category, org_id: query.organization_id }, { limit: query.limit, after });
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  return {
    data: page.map((r) => ({
      id: r.id,
      user: `user:${r.user_external_id}`,
      organization_id: r.org_id,
      organization_external_id: r.org_external_id,
      category: r.category as FeedbackCategory,
      message: r.message,
      rating: r.rating,
      context: r.context,
      created_at: r.created_at.toISOString(),
    })),
    next_cursor: more && last ? encodeCursor({ t: last.cursor_t, id: last.id }) : null,
  };
}
