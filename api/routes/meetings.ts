import * as meetings from '../../services/meetings';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { readRawBody } from '../middleware/raw-body';
import { fromZodError } from '../errors';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError, workflowUnavailable } from '../schemas/common';
import {
  Bot,
  BotDetail,
  BotList,
  BotListQuery,
  BotParams,
  CaptureAnswer,
  CaptureBody,
  CaptureHeaders,
  CreateBotBody,
} from '../schemas/meetings';

export const MEETING_CAPTURE_PATH = '/meetings/webhooks/capture';

const READ: AuthRule = { scope: 'crmRead' };
const MANAGE: AuthRule = { scope: 'crmManage' };
const TAG = 'Meetings';

function parseCapture(raw: string) {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw Object.assign(new SyntaxError((error as Error).message), { status: 400, type: 'entity.parse.failed' });
  }
  const parsed = CaptureBody.safeParse(value);
  if (!parsed.success) throw fromZodError(parsed.error, 'body', value);
  return parsed.data;
}

export function registerMeetingRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/meetings/bots',
    tag: TAG,
    summary: 'Send a bot to a Zoom, Google Meet or Teams meeting; its workflow starts with it',
    auth: MANAGE,
    body: CreateBotBody,
    responses: {
      200: { description: 'The bot, scheduled', schema: Bot },
      ...authErrors,
      404: { description: 'Account, deal or a contact not in the organization', schema: ErrorBody },
      ...validationError,
      ...workflowUnavailable,
    },
    handler: async ({ body, auth }) => reply(200, await meetings.createBot(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/meetings/bots',
    tag: TAG,
    summary: "The organization's meeting bots, newest first",
    auth: READ,
    query: BotListQuery,
    responses: {
      200: { description: 'One page', schema: BotList },
      400: { description: 'Invalid cursor or filter value', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => meetings.listBots(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/meetings/bots/{bot_id}',
    tag: TAG,
    summary: 'A meeting bot with its status history, recording and transcript',
    auth: READ,
    params: BotParams,
    responses: { 200: { description: 'The bot', schema: BotDetail }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => meetings.getBot(deps, orgOf(auth), params.bot_id),
  });

  routes.add({
    method: 'delete',
    path: '/meetings/bots/{bot_id}',
    tag: TAG,
    summary: 'Make the bot leave the call (or never join); what it recorded still reaches the CRM',
    auth: MANAGE,
    params: BotParams,
    responses: {
      202: { description: 'The workflow was told; it removes the vendor bot', schema: Bot },
      ...authErrors,
      ...notFoundError,
      409: { description: 'The bot has already ended', schema: ErrorBody },
      ...validationError,
      ...workflowUnavailable,
    },
    handler: async ({ params, auth }) => reply(202, await meetings.removeBot(deps, orgOf(auth), params.bot_id)),
  });

  routes.add({
    method: 'post',
    path: MEETING_CAPTURE_PATH,
    tag: TAG,
    summary: "The meeting vendor's signed event stream (Standard Webhooks / Svix signatures); no bearer token",
    auth: 'public',
    documented: { body: CaptureBody, headers: CaptureHeaders },
    responses: {
      200: {
        description: 'Handed to the bot’s workflow as one signal (a redelivered webhook-id is acknowledged without a second)',
        schema: CaptureAnswer,
      },
      202: { description: 'Verified, but no running bot of the service matches it', schema: CaptureAnswer },
      400: {
        description: 'Missing or invalid signature, or a timestamp more than five minutes off; nothing else was read',
        schema: ErrorBody,
      },
      413: { description: 'Body larger than BODY_LIMIT_BYTES', schema: ErrorBody },
      ...validationError,
      503: { description: 'No signing secret configured (every request is refused), or workflow engine unavailable', schema: ErrorBody },
    },
    handler: async ({ ctx }) => {
      const { webhookId, raw } = await meetings.verifyCapture(deps, () => readRawBody(ctx, deps.config.BODY_LIMIT_BYTES), ctx.headers);
      const placed = await meetings.placeCaptureEvent(deps, webhookId, parseCapture(raw));
      return reply(placed ? 200 : 202, { status: placed ? 'accepted' : 'ignored' });
    },
  });
}
