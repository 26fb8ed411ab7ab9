import { z } from 'zod';
import * as phoneNumbers from '../../db/phone-numbers';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { conflict, notFound } from '../errors';
import { cursorPage, decodeCursor } from '../pagination';
import { reply, type Routes } from '../route';
import { PhoneNumber, PhoneNumberCreateBody, PhoneNumberList, PhoneNumberListQuery } from '../schemas/agents';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError } from '../schemas/common';
import { phoneNumberView, toBool } from './agent-views';

const NumberCursor = z.object({ n: z.string() });

/** The organization's phone-number inventory, which agents are published to. */
export function registerPhoneNumberRoutes(routes: Routes, deps: AppDeps): void {
  const { sql } = deps;

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
    handler: async ({ body, auth }) => {
      try {
        return reply(200, phoneNumberView(await phoneNumbers.insertPhoneNumber(sql, orgOf(auth), body.number, body.label ?? null, actor(auth))));
      } catch (error) {
        if (error instanceof phoneNumbers.DuplicatePhoneNumber) throw conflict(`Phone number already registered: ${body.number}`);
        throw error;
      }
    },
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
    handler: async ({ query, auth, ctx }) => {
      const after = decodeCursor(query.cursor, NumberCursor);
      const { rows, total } = await phoneNumbers.listPhoneNumbers(
        sql,
        orgOf(auth),
        { agent_id: query.agent_id, available: toBool(query.available) },
        { limit: query.limit, afterNumber: after?.n },
      );
      const page = cursorPage(rows, query.limit, total, (last) => ({ n: last.number }));
      return { data: page.data.map(phoneNumberView), pagination: page.pagination };
    },
  });

  routes.add({
    method: 'delete',
    path: '/core/phone-numbers/{id}',
    tag: 'Agents',
    summary: 'Release a number: it leaves the inventory and stops serving its agents',
    auth: { scope: 'agentsManage' },
    params: IdParams,
    responses: { 204: { description: 'Released' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      if (!(await phoneNumbers.deletePhoneNumber(sql, orgOf(auth), params.id))) throw notFound('Phone number not found');
      return reply(204);
    },
  });
}
