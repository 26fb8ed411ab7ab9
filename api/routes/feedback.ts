import * as feedback from '../../services/feedback';
import { actor } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  FeedbackBody,
  FeedbackItem,
  FeedbackList,
  FeedbackParams,
  FeedbackQuery,
  FeedbackReceipt,
  FeedbackStatusBody,
  OwnFeedbackQuery,
} from '../schemas/feedback';

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
    responses: {
      200: { description: 'A page of feedback', schema: FeedbackList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query }) => feedback.listFeedback(deps, query),
  });

  routes.add({
    method: 'get',
    path: '/feedback/mine',
    tag: 'Feedback',
    summary: "The caller's own feedback, newest first, with the operators' triage status",
    auth: { org: 'optional' },
    query: OwnFeedbackQuery,
    responses: {
      200: { description: 'A page of feedback', schema: FeedbackList },
      400: { description: 'Invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, query }) => feedback.listOwnFeedback(deps, auth.userId, query),
  });

  routes.add({
    method: 'patch',
    path: '/feedback/{feedback_id}',
    tag: 'Feedback',
    summary: "Triage a piece of feedback (new, seen, done): the service's operators only (scope service:operate)",
    auth: { org: 'optional', scope: 'operator' },
    params: FeedbackParams,
    body: FeedbackStatusBody,
    responses: {
      200: { description: 'The feedback with its new status', schema: FeedbackItem },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ auth, params, body }) => feedback.setFeedbackStatus(deps, params.feedback_id, body.status, actor(auth)),
  });
}
