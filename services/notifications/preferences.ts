import * as db from '../../db/notifications';
import { invalid } from '../../domain/errors';
import {
  type NOTIFICATION_EVENTS,
  SUBSCRIBABLE_EVENTS,
  findEventDefinition,
  isSubscribable,
  type EmailCadence,
} from '../../domain/notification-events';
import { effectivePreference } from '../../domain/notifications';
import type { ServiceDeps } from '../deps';

// The user's preferences per event type: in-app, email cadence, subscription.

function preferenceView(def: (typeof NOTIFICATION_EVENTS)[number], stored?: db.PreferenceRow) {
  const effective = effectivePreference(def, stored);
  return {
    event_type: def.event_type,
    category: def.category,
    label: def.label,
    in_app: effective.in_app,
    email_cadence: effective.email_cadence,
    subscribed: stored?.subscribed ?? false,
    customized: stored !== undefined && (stored.in_app !== null || stored.email_cadence !== null),
  };
}

/** Every subscribable event type with the user's effective preference (the catalog's default where unset). */
export async function listPreferences(deps: Pick<ServiceDeps, 'sql'>, orgId: string, userId: string) {
  const stored = new Map((await db.preferencesOfUser(deps.sql, orgId, userId)).map((p) => [p.event_type, p]));
  return { preferences: SUBSCRIBABLE_EVENTS.map((def) => preferenceView(def, stored.get(def.event_type))) };
}

export interface PreferencePatch {
  in_app?: boolean | null;
  email_cadence?: EmailCadence | null;
  subscribed?: boolean;
}

/** Only the fields sent change; null returns a field to the catalog's default. Always-send events take none. */
export async function updatePreference(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  userId: string,
  eventType: string,
  patch: PreferencePatch,
) {
  if (Object.keys(patch).length === 0) throw invalid('Empty patch body: send in_app, email_cadence or subscribed');
  const def = findEventDefinition(eventType);
  if (!def) throw invalid(`Unregistered event_type '${eventType}'`);
  if (!isSubscribable(eventType)) throw invalid(`'${eventType}' is an operational alert that ignores preferences`);
  const row = await db.upsertPreference(deps.sql, orgId, userId, eventType, patch);
  return preferenceView(def, row);
}
