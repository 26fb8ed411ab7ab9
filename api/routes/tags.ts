import * as tags from '../../services/tags';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import { CreateTagBody, PatchTagBody, Tag, TagList, TagParams } from '../schemas/tags';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.

const duplicateName = { 409: { description: 'The organization already has a tag of that name', schema: ErrorBody } } as const;

export function registerTagRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/tags',
    tag: 'CRM',
    summary: "The organization's tags, by name",
    auth: { scope: 'crmRead' },
    responses: { 200: { description: 'Tags ordered by name ascending', schema: TagList }, ...authErrors },
    handler: async ({ auth }) => tags.listTags(deps, orgOf(auth)),
  });

  routes.add({
    method: 'post',
    path: '/tags',
    tag: 'CRM',
    summary: 'Create a tag',
    auth: { scope: 'crmManage' },
    body: CreateTagBody,
    responses: { 200: { description: 'Created', schema: Tag }, ...duplicateName, ...authErrors, ...validationError },
    handler: async ({ body, auth }) => reply(200, await tags.createTag(deps, orgOf(auth), body)),
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
    handler: async ({ params, body, auth }) => tags.updateTag(deps, orgOf(auth), params.tag_id, body),
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
      await tags.deleteTag(deps, orgOf(auth), params.tag_id);
      return reply(204);
    },
  });
}
