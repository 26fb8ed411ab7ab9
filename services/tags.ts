import * as tags from '../db/tags';
import type { TagRow } from '../db/tags';
import { invalid, notFound } from '../domain/errors';
import { TAGGED_TABLES } from '../domain/tags';
import type { ServiceDeps } from './deps';

const tagView = (row: TagRow) => ({ id: row.id, org_id: row.org_id, name: row.name, color: row.color });
const tagNotFound = () => notFound('Tag not found');

export async function listTags(deps: Pick<ServiceDeps, 'sql'>, orgId: string) {
  return { tags: (await tags.listTags(deps.sql, orgId)).map(tagView), schema_version: 1 as const };
}

export async function createTag(deps: Pick<ServiceDeps, 'sql'>, orgId: string, input: { name: string; color?: string | null }) {
  return tagView(await tags.insertTag(deps.sql, orgId, { name: input.name, color: input.color ?? null }));
}

/**
 * Renames and/or recolors a tag; a rename also renames the plain name on every contact, deal and
 * account of the organization, in the same transaction.
 */
export async function updateTag(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  tagId: string,
  patch: { name?: string; color?: string | null },
) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send name or color');
  const row = await deps.sql.begin(async (tx) => {
    const before = await tags.lockTag(tx, orgId, tagId);
    if (!before) return undefined;
    const after = (await tags.updateTag(tx, orgId, tagId, patch))!;
    if (after.name !== before.name) {
      for (const table of TAGGED_TABLES) await tags.renameTagIn(tx, orgId, table, before.name, after.name);
    }
    return after;
  });
  if (!row) throw tagNotFound();
  return tagView(row);
}

/** Deletes a tag and removes its name from every contact, deal and account of the organization. */
export async function deleteTag(deps: Pick<ServiceDeps, 'sql'>, orgId: string, tagId: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const name = await tags.deleteTag(tx, orgId, tagId);
    if (name === undefined) throw tagNotFound();
    for (const table of TAGGED_TABLES) await tags.removeTagFrom(tx, orgId, table, name);
  });
}
