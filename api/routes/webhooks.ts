import * as endpoints from '../../services/webhooks/endpoints';
import { eventTypes } from '../../services/webhooks/messages';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  CreateEndpointBody,
  Endpoint,
  EndpointList,
  EndpointListQuery,
  EndpointParams,
  EndpointWithSecret,
  EventTypeList,
  PatchEndpointBody,
} from '../schemas/webhooks';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.
// Reading takes the CRM read group; registering where the organization's data goes is an admin's act,
// like creating a key (api:manage or organizations:manage).
export const WEBHOOKS_READ: AuthRule = { scope: 'crmRead' };
export const WEBHOOKS_MANAGE: AuthRule = { scope: 'keyAdmin' };
const TAG = 'Webhooks';

export function registerWebhookRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/webhooks/event-types',
    tag: TAG,
    summary: 'The event types an endpoint may subscribe to: every notification event, and the webhook-only ones',
    auth: WEBHOOKS_READ,
    responses: { 200: { description: 'The catalog', schema: EventTypeList }, ...authErrors },
    handler: async () => eventTypes(),
  });

  routes.add({
    method: 'get',
    path: '/webhooks/endpoints',
    tag: TAG,
    summary: "The organization's webhook endpoints, newest first",
    auth: WEBHOOKS_READ,
    query: EndpointListQuery,
    responses: { 200: { description: 'A page of endpoints (no secrets)', schema: EndpointList }, ...authErrors, ...validationError },
    handler: async ({ auth, query }) => endpoints.listEndpoints(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'post',
    path: '/webhooks/endpoints',
    tag: TAG,
    summary: 'Register an endpoint; its signing secret is in this answer only',
    description:
      'Each message is POSTed as JSON {id, type, timestamp, data} with the Standard Webhooks headers webhook-id (msg_…, the ' +
      'same on every retry), webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of id.timestamp.body>). A 2xx ' +
      'answer within WEBHOOK_TIMEOUT_MS is a delivery; anything else is retried on the schedule (immediately, 5 s, 5 min, ' +
      '30 min, 2 h, 5 h, then 10 h, about three days). An endpoint that fails every attempt for five days is disabled and ' +
      'the organization notified (webhook_endpoint.disabled).',
    auth: WEBHOOKS_MANAGE,
    body: CreateEndpointBody,
    responses: { 200: { description: 'Created, with its secret', schema: EndpointWithSecret }, ...authErrors, ...validationError },
    handler: async ({ auth, body }) => endpoints.createEndpoint(deps, orgOf(auth), actor(auth), body),
  });

  routes.add({
    method: 'get',
    path: '/webhooks/endpoints/{endpoint_id}',
    tag: TAG,
    summary: 'An endpoint (without its secret)',
    auth: WEBHOOKS_READ,
    params: EndpointParams,
    responses: { 200: { description: 'The endpoint', schema: Endpoint }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ auth, params }) => endpoints.getEndpoint(deps, orgOf(auth), params.endpoint_id),
  });

  routes.add({
    method: 'patch',
    path: '/webhooks/endpoints/{endpoint_id}',
    tag: TAG,
    summary: 'Change the URL, description or event types of an endpoint, or disable or enable it',
    auth: WEBHOOKS_MANAGE,
    params: EndpointParams,
    body: PatchEndpointBody,
    responses: {
      200: { description: 'The endpoint', schema: Endpoint },
      400: { description: 'Empty body', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ auth, params, body }) => endpoints.updateEndpoint(deps, orgOf(auth), actor(auth), params.endpoint_id, body),
  });

  routes.add({
    method: 'delete',
    path: '/webhooks/endpoints/{endpoint_id}',
    tag: TAG,
    summary: 'Delete an endpoint with its deliveries and attempts',
    auth: WEBHOOKS_MANAGE,
    params: EndpointParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ auth, params }) => {
      await endpoints.deleteEndpoint(deps, orgOf(auth), params.endpoint_id);
      return reply(204);
    },
  });

  routes.add({
    method: 'post',
    path: '/webhooks/endpoints/{endpoint_id}/rotate-secret',
    tag: TAG,
    summary: 'Replace the signing secret; the previous one keeps signing beside it for WEBHOOK_SECRET_OVERLAP_SECONDS (24 h)',
    description:
      'During the overlap every delivery carries two space-separated v1 signatures, one per secret, so a receiver can ' +
      'switch to the new secret at any time. The new secret is in this answer only.',
    auth: WEBHOOKS_MANAGE,
    params: EndpointParams,
    responses: {
      200: { description: 'The endpoint with its new secret', schema: EndpointWithSecret },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ auth, params }) => endpoints.rotateSecret(deps, orgOf(auth), actor(auth), params.endpoint_id),
  });
}
