import * as phoneNumbers from '../../services/phone-numbers';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { PhoneNumber, PhoneNumberCreateBody, PhoneNumberImport, PhoneNumberList, PhoneNumberListQuery } from '../schemas/agents';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';
import { registerTelephonyInboundRoutes } from './telephony-inbound';

/** The organization's phone-number inventory, which agents are published to. */
export function registerPhoneNumberRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/core/phone-numbers',
    tag: 'Agents',
    summary: "Register a phone number (E.164) in the organization's inventory",
    auth: { scope: 'agentsManage' },
    body: PhoneNumberCreateBody,
    responses: {
      200: { description: 'Registered', schema: PhoneNumber },
      409: { description: 'Already in the inventory', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(200, await phoneNumbers.registerNumber(deps, orgOf(auth), actor(auth), body)),
  });

  routes.add({
    method: 'post',
    path: '/core/phone-numbers/import',
    tag: 'Agents',
    summary:
      "Import the telephony account's numbers (the organization's own, else DIALER=twilio or vapi) into the inventory, upserted by number",
    description:
      "Lists the provider account's numbers (Twilio's IncomingPhoneNumbers, Vapi's phone numbers) and upserts them into the " +
      "organization's inventory by E.164 number: a new number is added, one already there is linked to the provider's id " +
      "(keeping its label, or taking the provider's where it had none). Importing again changes nothing. Numbers without an " +
      'E.164 address (SIP-only ones) are left out.',
    auth: { scope: 'agentsManage' },
    responses: {
      200: { description: 'Imported: the counts and every number of the account', schema: PhoneNumberImport },
      502: {
        description: 'The provider failed or did not answer within DIALER_PROVIDER_TIMEOUT_MS; nothing was written',
        schema: ErrorBody,
      },
      503: {
        description: 'No telephony account: none connected by the organization (or one that needs new keys) and none configured',
        schema: ErrorBody,
      },
      ...authErrors,
    },
    handler: async ({ auth }) => phoneNumbers.importNumbers(deps, orgOf(auth), actor(auth)),
  });

  routes.add({
    method: 'get',
    path: '/core/phone-numbers',
    tag: 'Agents',
    summary: 'List the inventory in number order, with the agents each number serves',
    auth: { scope: 'agentsRead' },
    query: PhoneNumberListQuery,
    responses: {
      200: { description: 'One page of numbers', schema: PhoneNumberList },
      400: { description: 'Unknown filter or invalid cursor', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => phoneNumbers.listNumbers(deps, orgOf(auth), query),
  });

  routes.add({
    method: 'delete',
    path: '/core/phone-numbers/{id}',
    tag: 'Agents',
    summary: 'Release a number: it leaves the inventory and stops serving its agents',
    description: 'A number pointed at the service at its provider first gets back what it pointed at before.',
    auth: { scope: 'agentsManage' },
    params: IdParams,
    responses: {
      204: { description: 'Released' },
      502: { description: 'The provider failed or did not answer; the number stays', schema: ErrorBody },
      503: { description: "The number's provider is not the organization's telephony account now", schema: ErrorBody },
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, auth }) => {
      await phoneNumbers.releaseNumber(deps, orgOf(auth), params.id);
      return reply(204);
    },
  });

  registerTelephonyInboundRoutes(routes, deps);
}
