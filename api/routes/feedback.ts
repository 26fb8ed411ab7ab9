import * as feedback from '../../services/feedback';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, validationError } from '../schemas/common';
import { FeedbackBody, FeedbackList, FeedbackQuery, FeedbackReceipt } from '../schemas/feedback';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

export function registerFeedbackRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/feedback',
    tag: 'Feedback',
    summary: 'Send feedback, with or without an active organization (kept as context)',
    auth: { org: 'optional' },
    body: FeedbackBody,
    responses: {
      200: { description: 'Stored', schema: FeedbackReceipt },
      429: {
        description: 'Too much feedback from this user in the window (FEEDBACK_PER_USER per FEEDBACK_WINDOW_SECONDS)',
        schema: ErrorBody,
        headers: { 'Retry-After': { description: 'Seconds until the window ends', schema: { type: 'integer' as const } } },
      },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, body }) => reply(200, await feedback.submitFeedback(deps, { userId: auth.userId, orgId: auth.orgId }, body)),
  });

  routes.add({
    method: 'get',
    path: '/feedback',
    tag: 'Feedback',
    summary: "Every organization's feedback, newest first: the service's operators only (scope service:operate)",
    auth: { org: 'optional', scope: 'operator' },
    query: FeedbackQuery,
    responses: { 200: { description: 'A page of feedback', schema: FeedbackList }, 400: { description: 'Invalid cursor', schema: ErrorBody }, ...authErrors, ...validationError },
    handler: async ({ query }) => feedback.listFeedback(deps, query),
  });
}
