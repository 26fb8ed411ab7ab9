import * as db from '../db/feedback';
import type { FeedbackRow } from '../db/feedback';
import { notFound, rateLimited } from '../domain/errors';
import type { FeedbackCategory, FeedbackStatus } from '../domain/feedback';
import type { Config } from '../platform/core/config';
import { newId } from '../platform/core/ids';
import { RateLimiter } from '../platform/core/rate-limit';
import type { ServiceDeps } from './deps';
import { CreatedCursor, decodeCursor, nextPage } from './pagination';

// Feedback: any signed-in user, with or without an active organization (kept as context), limited per
// user; each user reads their own; the service's operators read all of it and triage it.

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
  email?: string;
}

export async function submitFeedback(
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  caller: { userId: string; orgId: string | null },
  input: FeedbackInput,
) {
  const taken = limiterFor(deps.config).take(caller.userId);
  if (!taken.ok) throw rateLimited('Too much feedback from this user; try again later', taken.retryAfterSeconds);
  const row = await db.insertFeedback(deps.sql, newId(), {
    userId: caller.userId,
    orgId: caller.orgId,
    category: input.category,
    message: input.message,
    rating: input.rating ?? null,
    context: input.context ?? {},
    email: input.email ?? null,
  });
  return { id: row.id, created_at: row.created_at.toISOString() };
}

const feedbackView = (r: FeedbackRow) => ({
  id: r.id,
  user: `user:${r.user_external_id}`,
  submitter_email: r.submitter_email,
  organization_id: r.org_id,
  organization_external_id: r.org_external_id,
  category: r.category as FeedbackCategory,
  message: r.message,
  rating: r.rating,
  context: r.context,
  status: r.status as FeedbackStatus,
  status_changed_at: r.status_changed_at?.toISOString() ?? null,
  created_at: r.created_at.toISOString(),
});

interface ListQuery {
  category?: FeedbackCategory;
  status?: FeedbackStatus;
  limit: number;
  cursor?: string;
}

async function pageOf(deps: Pick<ServiceDeps, 'sql'>, filters: Parameters<typeof db.listFeedback>[1], query: ListQuery) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const rows = await db.listFeedback(deps.sql, filters, { limit: query.limit, after });
  const { data, next_cursor } = nextPage(rows, query.limit, (last) => ({ t: last.cursor_t, id: last.id }));
  return { data: data.map(feedbackView), next_cursor };
}

/** Every organization's feedback, newest first: operators only. */
export async function listFeedback(deps: Pick<ServiceDeps, 'sql'>, query: ListQuery & { organization_id?: string }) {
  return pageOf(deps, { category: query.category, status: query.status, org_id: query.organization_id }, query);
}

/** The caller's own feedback, newest first, with where operators stand with it. */
export async function listOwnFeedback(deps: Pick<ServiceDeps, 'sql'>, userId: string, query: ListQuery) {
  return pageOf(deps, { category: query.category, status: query.status, user_id: userId }, query);
}

/** Operators triage: new → seen → done, in any order. */
export async function setFeedbackStatus(deps: Pick<ServiceDeps, 'sql'>, feedbackId: string, status: FeedbackStatus, actor: string) {
  const row = await db.setFeedbackStatus(deps.sql, feedbackId, status, actor);
  if (!row) throw notFound('Feedback not found');
  return feedbackView(row);
}
