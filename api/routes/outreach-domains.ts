import * as domains from '../../services/outreach/domains';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, validationError } from '../schemas/common';
import {
  AddDomainBody,
  Availability,
  AvailabilityQuery,
  Domain,
  DomainList,
  DomainListQuery,
  DomainParams,
  PatchDomainBody,
  PurchaseDomainBody,
} from '../schemas/outreach-domains';

const READ: AuthRule = { scope: 'outreachRead' };
const MANAGE: AuthRule = { scope: 'outreachManage' };
const PROVISION: AuthRule = { scope: 'outreachProvision' };
const TAG = 'Outreach';
const notFound = { 404: { description: 'Domain not found in the organization', schema: ErrorBody } } as const;

export function registerOutreachDomainRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/outreach/domains',
    tag: TAG,
    summary: 'List sending domains with their DNS records, newest first',
    auth: READ,
    query: DomainListQuery,
    responses: {
      200: { description: 'One page and the total matching', schema: DomainList },
      400: { description: 'Unknown filter, invalid status or invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => domains.listDomains(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'post',
    path: '/outreach/domains',
    tag: TAG,
    summary: 'Add a domain the organization owns; answers the DNS records to publish (a fresh DKIM key pair each)',
    auth: MANAGE,
    body: AddDomainBody,
    responses: {
      200: { description: 'Added, pending verification', schema: Domain },
      409: { description: 'The organization already has this domain', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await domains.addDomain(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/outreach/domains/availability',
    tag: TAG,
    summary: 'Ask the registrar whether a domain is available, and its price',
    auth: READ,
    query: AvailabilityQuery,
    responses: {
      200: { description: 'Availability and yearly price', schema: Availability },
      502: { description: 'The registrar failed', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query }) => domains.checkAvailability(deps, query.name),
  });

  routes.add({
    method: 'post',
    path: '/outreach/domains/purchase',
    tag: TAG,
    summary: 'Buy a domain through the registrar (cost-bearing) and add it',
    auth: PROVISION,
    body: PurchaseDomainBody,
    responses: {
      200: { description: 'Bought and added, pending verification', schema: Domain },
      400: { description: 'A term (years) the registrar does not sell', schema: ErrorBody },
      409: { description: 'Not available, above max_price_cents, or the organization already has it', schema: ErrorBody },
      502: { description: 'The registrar failed', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await domains.purchaseDomain(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/outreach/domains/{domain_id}',
    tag: TAG,
    summary: 'One domain with its DNS records and their status',
    auth: READ,
    params: DomainParams,
    responses: { 200: { description: 'The domain', schema: Domain }, ...authErrors, ...notFound, ...validationError },
    handler: async ({ params, auth }) => domains.getDomain(deps, orgOf(auth), params.domain_id),
  });

  routes.add({
    method: 'patch',
    path: '/outreach/domains/{domain_id}',
    tag: TAG,
    summary: 'Switch open and click tracking; a verified-before domain is judged again from its stored record statuses',
    auth: MANAGE,
    params: DomainParams,
    body: PatchDomainBody,
    responses: { 200: { description: 'The domain', schema: Domain }, ...authErrors, ...notFound, ...validationError },
    handler: async ({ params, body, auth }) => domains.setDomainTracking(deps, orgOf(auth), params.domain_id, body.tracking_enabled),
  });

  routes.add({
    method: 'post',
    path: '/outreach/domains/{domain_id}/verify',
    tag: TAG,
    summary: 'Look up every DNS record of the domain now and store the status of each',
    auth: MANAGE,
    params: DomainParams,
    responses: { 200: { description: 'The domain after the run', schema: Domain }, ...authErrors, ...notFound, ...validationError },
    handler: async ({ params, auth }) => domains.verifyDomain(deps, orgOf(auth), params.domain_id),
  });

  routes.add({
    method: 'delete',
    path: '/outreach/domains/{domain_id}',
    tag: TAG,
    summary: 'Delete a domain and its DKIM key (the registration itself is not canceled)',
    auth: MANAGE,
    params: DomainParams,
    responses: {
      204: { description: 'Deleted' },
      409: { description: 'Mailboxes still live on the domain', schema: ErrorBody },
      ...authErrors,
      ...notFound,
      ...validationError,
    },
    handler: async ({ params, auth }) => {
      await domains.deleteDomain(deps, orgOf(auth), params.domain_id);
      return reply(204);
    },
  });
}
