import * as db from '../../db/intelligence';
import type { IcpProfileRow, IcpProfileVersionRow } from '../../db/intelligence';
import { invalid, notFound } from '../../domain/errors';
import type { Criterion } from '../../domain/intelligence';
import { newId } from '../../platform/core/ids';
import type { ServiceDeps } from '../deps';
import { ensureNightlySchedule } from '../readiness';
import { onUnique } from '../../db/kit/unique';

// ICP profiles: the criteria accounts are scored against, versioned on every criteria change; the
// organization's default one is the fit axis of readiness.

export const profileNotFound = () => notFound('ICP profile not found');

export const profileView = (row: IcpProfileRow) => ({
  id: row.id,
  name: row.name,
  description: row.description,
  version: row.version,
  criteria: row.criteria,
  is_default: row.is_default,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

const versionView = (row: IcpProfileVersionRow) => ({
  profile_id: row.profile_id,
  version: row.version,
  criteria: row.criteria,
  created_at: row.created_at.toISOString(),
});

const DUPLICATE_NAME = 'An ICP profile with this name already exists';

export interface ProfileInput {
  name: string;
  description?: string | null;
  criteria: Criterion[];
  is_default?: boolean;
}

/**
 * The organization's first profile becomes its default (the fit axis of readiness profiles), and the
 * organization's nightly readiness schedule is made with it, not at the first manual refresh.
 */
export async function createProfile(
  deps: Pick<ServiceDeps, 'sql' | 'temporal' | 'config' | 'logger'>,
  orgId: string,
  actor: string,
  input: ProfileInput,
) {
  const row = await onUnique(
    deps.sql.begin(async (tx) => {
      await db.lockRun(tx, orgId, 'profiles');
      const isDefault = input.is_default ?? !(await db.hasProfiles(tx, orgId));
      if (isDefault) await db.clearDefault(tx, orgId);
      return db.insertProfile(tx, orgId, {
        id: newId(),
        name: input.name,
        description: input.description ?? null,
        criteria: input.criteria,
        is_default: isDefault,
        created_by: actor,
      });
    }),
    DUPLICATE_NAME,
  );
  if (row.is_default) {
    // Best effort: the profile is saved either way, and the next readiness refresh makes the schedule.
    await ensureNightlySchedule(deps, orgId).catch((error: unknown) =>
      deps.logger.warn(
        { orgId, err: error instanceof Error ? error.message : String(error) },
        'readiness nightly schedule not created yet',
      ),
    );
  }
  return profileView(row);
}

export async function listProfiles(deps: Pick<ServiceDeps, 'sql'>, orgId: string, page: { limit: number; offset: number }) {
  return { profiles: (await db.listProfiles(deps.sql, orgId, page)).map(profileView), limit: page.limit, offset: page.offset };
}

export async function getProfile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string) {
  const row = await db.getProfile(deps.sql, orgId, profileId);
  if (!row) throw profileNotFound();
  return profileView(row);
}

/** A criteria change makes a new version; name, description and the default flag do not. */
export async function updateProfile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string, patch: Partial<ProfileInput>) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send name, description, criteria or is_default');
  const row = await onUnique(
    deps.sql.begin(async (tx) => {
      if (!(await db.getProfile(tx, orgId, profileId, true))) throw profileNotFound();
      if (patch.is_default === true) await db.clearDefault(tx, orgId);
      return db.updateProfile(tx, orgId, profileId, patch);
    }),
    DUPLICATE_NAME,
  );
  return profileView(row);
}

/** Deleting a profile keeps the runs scored with it (their profile_id becomes null, their version stays). */
export async function deleteProfile(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string): Promise<void> {
  if (!(await db.deleteProfile(deps.sql, orgId, profileId))) throw profileNotFound();
}

export async function listProfileVersions(deps: Pick<ServiceDeps, 'sql'>, orgId: string, profileId: string) {
  if (!(await db.getProfile(deps.sql, orgId, profileId))) throw profileNotFound();
  return { versions: (await db.listProfileVersions(deps.sql, orgId, profileId)).map(versionView) };
}
