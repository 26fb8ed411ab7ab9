import * as unibox from '../../services/outreach/unibox';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  MarkReadBody,
  ReplyBody,
  Thread,
  ThreadList,
  ThreadListQuery,
  ThreadMessage,
  ThreadParams,
  ThreadSummary,
  replyContent,
} from '../schemas/outreach-unibox';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const READ: AuthRule = { scope: 'outreachRead' };
const MANAGE: AuthRule = { scope: 'outreachManage' };
const TAG = 'Outreach';
const BASE = '/outreach/sequencer/unibox/threads';

export function registerOutreachUniboxRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: BASE,
    tag: TAG,
    summary: 'Unibox threads, latest message first; filters mailbox, sequence, unread, needs_reply',
    auth: READ,
    query: ThreadListQuery,
    responses: {
      200: { description: 'One page', schema: ThreadList },
      400: { description: 'Invalid cursor or filter value', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => unibox.listThreads(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: `${BASE}/{thread_id}`,
    tag: TAG,
    summary: 'One conversation with every message (sanitized HTML) and its campaign context: sequence, step, enrollment, contact, mailbox',
    auth: READ,
    params: ThreadParams,
    responses: { 200: { description: 'The thread', schema: Thread }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => unibox.readThread(deps, orgOf(auth), params.thread_id),
  });

  routes.add({
    method: 'post',
    path: `${BASE}/{thread_id}/read`,
    tag: TAG,
    summary: 'Mark the thread read (or, with read=false, unread)',
    auth: MANAGE,
    params: ThreadParams,
    body: MarkReadBody,
    responses: { 200: { description: 'The thread', schema: ThreadSummary }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, body, auth }) => unibox.markRead(deps, orgOf(auth), params.thread_id, body.read),
  });

  routes.add({
    method: 'post',
    path: `${BASE}/{thread_id}/reply`,
    tag: TAG,
    summary: "Reply from the thread, through the thread's mailbox, with In-Reply-To and References set",
    auth: MANAGE,
    params: ThreadParams,
    body: ReplyBody,
    responses: {
      200: { description: 'The message sent', schema: ThreadMessage },
      ...authErrors,
      ...notFoundError,
      409: { description: "The thread's mailbox is paused or gone", schema: ErrorBody },
      ...validationError,
      502: {
        description: "The mailbox's SMTP server refused the message or could not be reached; it stays in the thread as failed",
        schema: ErrorBody,
      },
    },
    handler: async ({ params, body, auth }) =>
      reply(200, await unibox.replyToThread(deps, orgOf(auth), actor(auth), params.thread_id, replyContent(body))),
  });
}
