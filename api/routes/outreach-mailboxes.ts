import * as mailboxes from '../../services/outreach/mailboxes';
import * as provisioning from '../../services/outreach/mailbox-provisioning';
import { actor, orgOf, type AuthRule } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  ConnectMailboxBody,
  Mailbox,
  MailboxHealth,
  MailboxList,
  MailboxListQuery,
  MailboxParams,
  PatchMailboxBody,
  ProvisionMailboxBody,
} from '../schemas/outreach-mailboxes';

const READ: AuthRule = { scope: 'outreachRead' };
const MANAGE: AuthRule = { scope: 'outreachManage' };
const PROVISION: AuthRule = { scope: 'outreachProvision' };
const TAG = 'Outreach';
const notFound = { 404: { description: 'Mailbox not found in the organization', schema: ErrorBody } } as const;
const duplicate = { 409: { description: 'The organization already has a mailbox with this email address', schema: ErrorBody } } as const;

export function registerOutreachMailboxRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/outreach/mailboxes',
    tag: TAG,
    summary: 'List mailboxes, newest first (no secrets)',
    auth: READ,
    query: MailboxListQuery,
    responses: {
      200: { description: 'One page and the total matching', schema: MailboxList },
      400: { description: 'Unknown filter, invalid status or invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => mailboxes.listMailboxes(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'post',
    path: '/outreach/mailboxes',
    tag: TAG,
    summary: 'Connect a mailbox by its SMTP (and optionally IMAP) settings; passwords are stored encrypted and never returned',
    auth: MANAGE,
    body: ConnectMailboxBody,
    responses: {
      200: { description: 'Connected', schema: Mailbox },
      400: {
        description:
          'Unknown time zone, window_start not before window_end, a password without a username, IMAP without any password, an SMTP or IMAP host that is not a reachable public mail server (one answer for every reason: no such name, a private or loopback address, a refused or silent port), or a refused SMTP login',
        schema: ErrorBody,
      },
      ...duplicate,
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await provisioning.connectMailbox(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'post',
    path: '/outreach/mailboxes/provision',
    tag: TAG,
    summary: 'Provision a mailbox on a verified domain of the organization through the mailbox provider (cost-bearing)',
    auth: PROVISION,
    body: ProvisionMailboxBody,
    responses: {
      200: { description: 'Provisioned', schema: Mailbox },
      400: { description: 'Unknown time zone', schema: ErrorBody },
      404: { description: 'Domain not found in the organization', schema: ErrorBody },
      409: { description: 'The domain is not verified, or the address is taken', schema: ErrorBody },
      502: { description: 'The mailbox provider failed; nothing was saved', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await provisioning.provisionMailbox(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/outreach/mailboxes/{mailbox_id}',
    tag: TAG,
    summary: 'One mailbox (no secrets)',
    auth: READ,
    params: MailboxParams,
    responses: { 200: { description: 'The mailbox', schema: Mailbox }, ...authErrors, ...notFound, ...validationError },
    handler: async ({ params, auth }) => mailboxes.getMailbox(deps, orgOf(auth), params.mailbox_id),
  });

  routes.add({
    method: 'patch',
    path: '/outreach/mailboxes/{mailbox_id}',
    tag: TAG,
    summary: 'Change the daily limit, sending window, time zone, warm-up or display name',
    auth: MANAGE,
    params: MailboxParams,
    body: PatchMailboxBody,
    responses: {
      200: { description: 'The updated mailbox', schema: Mailbox },
      400: { description: 'Empty body, unknown time zone, or window_start not before window_end', schema: ErrorBody },
      ...authErrors,
      ...notFound,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => mailboxes.updateMailbox(deps, orgOf(auth), params.mailbox_id, body),
  });

  for (const move of ['pause', 'resume'] as const) {
    routes.add({
      method: 'post',
      path: `/outreach/mailboxes/{mailbox_id}/${move}`,
      tag: TAG,
      summary: move === 'pause' ? 'Pause a mailbox: sequences send nothing through it' : 'Resume a paused mailbox',
      auth: MANAGE,
      params: MailboxParams,
      responses: {
        200: { description: 'The mailbox in its new state', schema: Mailbox },
        409: { description: move === 'pause' ? 'The mailbox is already paused' : 'The mailbox is not paused', schema: ErrorBody },
        ...authErrors,
        ...notFound,
        ...validationError,
      },
      handler: async ({ params, auth }) => mailboxes.moveMailbox(deps, orgOf(auth), params.mailbox_id, move),
    });
  }

  routes.add({
    method: 'get',
    path: '/outreach/mailboxes/{mailbox_id}/health',
    tag: TAG,
    summary: "Bounces, failures and what went out on the mailbox's local day",
    auth: READ,
    params: MailboxParams,
    responses: { 200: { description: 'Health counters', schema: MailboxHealth }, ...authErrors, ...notFound, ...validationError },
    handler: async ({ params, auth }) => mailboxes.mailboxHealth(deps, orgOf(auth), params.mailbox_id),
  });

  routes.add({
    method: 'delete',
    path: '/outreach/mailboxes/{mailbox_id}',
    tag: TAG,
    summary: 'Delete a mailbox and its stored passwords (409 while a draft, active or paused sequence has it in its pool)',
    auth: MANAGE,
    params: MailboxParams,
    responses: {
      204: { description: 'Deleted' },
      409: { description: 'A sequence that can still send has the mailbox in its pool', schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => {
      await mailboxes.deleteMailbox(deps, orgOf(auth), params.mailbox_id);
      return reply(204);
    },
  });
}
