import * as messages from '../../services/webhooks/messages';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  AttemptList,
  DeliveryWithUrl,
  EndpointAttemptsQuery,
  EndpointMessageList,
  EndpointMessageParams,
  EndpointMessagesQuery,
  EndpointParams,
  MessageAttemptsQuery,
  MessageDetail,
  MessageList,
  MessageListQuery,
  MessageParams,
  ResendAnswer,
} from '../schemas/webhooks';
import { WEBHOOKS_MANAGE, WEBHOOKS_READ } from './webhooks';

// What was sent to the organization's endpoints: messages, deliveries, attempts, and resending.
const TAG = 'Webhooks';

export function registerWebhookMessageRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/webhooks/messages',
    tag: TAG,
    summary: "The organization's messages (events that went to at least one endpoint), newest first",
    auth: WEBHOOKS_READ,
    query: MessageListQuery,
    responses: { 200: { description: 'A page of messages', schema: MessageList }, ...authErrors, ...validationError },
    handler: async ({ auth, query }) => messages.listMessages(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'get',
    path: '/webhooks/messages/{message_id}',
    tag: TAG,
    summary: 'A message, with its delivery to each endpoint it went to',
    auth: WEBHOOKS_READ,
    params: MessageParams,
    responses: { 200: { description: 'The message', schema: MessageDetail }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ auth, params }) => messages.getMessage(deps, orgOf(auth), params.message_id),
  });

  routes.add({
    method: 'get',
    path: '/webhooks/messages/{message_id}/attempts',
    tag: TAG,
    summary: "A message's attempts, newest first",
    auth: WEBHOOKS_READ,
    params: MessageParams,
    query: MessageAttemptsQuery,
    responses: { 200: { description: 'A page of attempts', schema: AttemptList }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ auth, params, query }) => messages.listMessageAttempts(deps, orgOf(auth), params.message_id, query),
  });

  routes.add({
    method: 'post',
    path: '/webhooks/messages/{message_id}/resend',
    tag: TAG,
    summary: 'Send a message again to every enabled endpoint whose delivery of it failed for good',
    description: 'Each delivery starts a fresh retry schedule, its first attempt due now. No failed delivery: nothing is sent.',
    auth: WEBHOOKS_MANAGE,
    params: MessageParams,
    responses: {
      202: { description: 'Queued; the endpoints it goes to again', schema: ResendAnswer },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ auth, params }) => reply(202, await messages.resendFailed(deps, orgOf(auth), params.message_id)),
  });

  routes.add({
    method: 'get',
    path: '/webhooks/endpoints/{endpoint_id}/messages',
    tag: TAG,
    summary: 'The messages that went to an endpoint, newest first, with their delivery status there',
    auth: WEBHOOKS_READ,
    params: EndpointParams,
    query: EndpointMessagesQuery,
    responses: {
      200: { description: 'A page of deliveries', schema: EndpointMessageList },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ auth, params, query }) => messages.listEndpointMessages(deps, orgOf(auth), params.endpoint_id, query),
  });

  routes.add({
    method: 'get',
    path: '/webhooks/endpoints/{endpoint_id}/attempts',
    tag: TAG,
    summary: "An endpoint's attempts, newest first: status code, latency, the answer's first bytes, the error",
    auth: WEBHOOKS_READ,
    params: EndpointParams,
    query: EndpointAttemptsQuery,
    responses: { 200: { description: 'A page of attempts', schema: AttemptList }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ auth, params, query }) => messages.listEndpointAttempts(deps, orgOf(auth), params.endpoint_id, query),
  });

  routes.add({
    method: 'post',
    path: '/webhooks/endpoints/{endpoint_id}/messages/{message_id}/resend',
    tag: TAG,
    summary: 'Send a message again to one endpoint, whatever became of it there',
    description: 'The delivery starts a fresh retry schedule, its first attempt (trigger manual) due now.',
    auth: WEBHOOKS_MANAGE,
    params: EndpointMessageParams,
    responses: {
      202: { description: 'Queued; the delivery', schema: DeliveryWithUrl },
      404: { description: 'No such endpoint in the organization, or the message never went to it', schema: ErrorBody },
      409: { description: 'The endpoint is disabled', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, params }) =>
      reply(202, await messages.resendToEndpoint(deps, orgOf(auth), params.endpoint_id, params.message_id)),
  });
}
