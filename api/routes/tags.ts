import type { z } from 'zod';
import * as tags from '../../db/tags';
import type { TagRow } from '../../db/tags';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { badRequest, conflict, notFound } from '../errors';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { CreateTagBody, PatchTagBody, Tag, TagList, TagParams } from '../schemas/tags';

const tagView = (row: TagRow): z.output<typeof Tag> => ({ id: row.id, org_id: row.org_id, name: row.name, color: row.color });

const tagNotFound = () => notFound('Tag not found');
const duplicateName = { 409: { description: 'The organization already has a tag of that name', schema: ErrorBody } } as const;

async function writing<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof tags.DuplicateTagError) throw conflict(error.message);
    throw error;
  }
}

export function registerTagRoutes(routes: Routes, deps: AppDeps): void {
  const { sql } = deps;

  routes.add({
    method: 'get',
    path: '/tags',
    tag: 'CRM',
    summary: "The organization's tags, by name",
    auth: { scope: 'crmRead' },
    responses: { 200: { description: 'Tags ordered by name ascending', schema: TagList }, ...authErrors },
    handler: async ({ auth }) => ({ tags: (await tags.listTags(sql, orgOf(auth))).map(tagView), schema_version: 1 as const }),
  });

  routes.add({
    method: 'post',
    path: '/tags',
    tag: 'CRM',
    summary: 'Create a tag',
    auth: { scope: 'crmManage' },
    body: CreateTagBody,
    responses: { 200: { description: 'Created', schema: Tag }, ...duplicateName, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => {
      const row = await writing(() => tags.insertTag(sql, orgOf(auth), { name: body.name, color: body.color ?? null }));
      return reply(200, tagView(row));
    },
  });

  routes.add({
    method: 'patch',
    path: '/tags/{tag_id}',
    tag: 'CRM',
    summary: 'Rename or recolor a tag; a rename also renames it on contacts, deals and accounts',
    auth: { scope: 'crmManage' },
    params: TagParams,
    body: PatchTagBody,
    responses: {
      200: { description: 'The updated tag', schema: Tag },
      400: { description: 'Empty body', schema: ErrorBody },
      ...duplicateName,
      ...authErrors,
      ...notFoundError,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      if (Object.keys(body).length === 0) throw badRequest('Empty patch body: send name or color');
      const row = await writing(() => tags.updateTag(sql, orgOf(auth), params.tag_id, body));
      if (!row) throw tagNotFound();
      return tagView(row);
    },
  });

  routes.add({
    method: 'delete',
    path: '/tags/{tag_id}',
    tag: 'CRM',
    summary: 'Delete a tag and remove its name from contacts, deals and accounts',
    auth: { scope: 'crmManage' },
    params: TagParams,
    responses: { 204: { description: 'Deleted' }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      if (!(await tags.deleteTag(sql, orgOf(auth), params.tag_id))) throw tagNotFound();
      return reply(204);
    },
  });
}
