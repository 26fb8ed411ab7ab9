import * as catalog from '../../services/notifications/catalog';
import * as feed from '../../services/notifications/feed';
import * as preferences from '../../services/notifications/preferences';
import { actingUser, orgOf, type RequestAuth } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ErrorBody, authErrors, notFoundError, validationError } from '../schemas/common';
import {
  EmitEventBody,
  EmitEventResult,
  EventCatalog,
  FeedQuery,
  NotificationFeed,
  NotificationItem,
  NotificationParams,
  Preference,
  PreferenceList,
  PreferenceParams,
  PreferencePatch,
  ReadAllResult,
  UnreadCount,
} from '../schemas/notifications';

// Notifications: event emission and the catalog, then the calling user's feed and preferences.
// Every route needs an active organization and answers 403 without one, as the contract says for this area.

const ORG = { org: 'required-403' } as const;
/** The feed and preferences are a user's: a session or a pat_ token, never an organization key. */
const USER = { ...ORG, user: true } as const;

const feedErrors = {
  ...authErrors,
  403: { description: 'No active organization, or an organization API key (it has no user, hence no feed)', schema: ErrorBody },
} as const;

/** The caller's organization and user (USER routes: the guard already refused an organization key). */
function userOf(auth: RequestAuth): { orgId: string; userId: string } {
  return { orgId: orgOf(auth), userId: auth.userId };
}

export function registerNotificationRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'get',
    path: '/notifications/event-catalog',
    tag: 'Notifications',
    summary: 'The subscribable notification events (always-send alerts excluded), in a stable order',
    auth: ORG,
    responses: { 200: { description: 'The catalog', schema: EventCatalog }, ...authErrors },
    handler: async () => catalog.eventCatalog(),
  });

  routes.add({
    method: 'post',
    path: '/notifications/events',
    tag: 'Notifications',
    summary: "Queue a deal event to the organization's notification actor; nothing is delivered synchronously",
    auth: { ...ORG, scope: 'crmManage' },
    body: EmitEventBody,
    responses: {
      202: { description: 'Queued (accepted: true) or dropped (accepted: false)', schema: EmitEventResult },
      400: { description: 'entity_type other than deal, or unregistered event_type', schema: ErrorBody },
      ...authErrors,
      404: { description: "The deal is not visible in the caller's organization", schema: ErrorBody },
      ...validationError,
    },
    handler: async ({ body, auth }) => reply(202, await catalog.emitManualEvent(deps, orgOf(auth), actingUser(auth), body)),
  });

  routes.add({
    method: 'get',
    path: '/notifications',
    tag: 'Notifications',
    summary: "The calling user's in-app notifications, newest first, cursor-paginated",
    auth: USER,
    query: FeedQuery,
    responses: {
      200: {
        description: 'Items ordered by created_at descending (tie-break id descending); archived items are left out',
        schema: NotificationFeed,
      },
      400: { description: 'Unknown filter, invalid unread value or invalid cursor', schema: ErrorBody },
      ...feedErrors,
      ...validationError,
    },
    handler: async ({ query, auth }) => {
      const { orgId, userId } = userOf(auth);
      return feed.listFeed(deps, orgId, userId, { unread: query.unread === 'true', cursor: query.cursor, limit: query.limit });
    },
  });

  routes.add({
    method: 'get',
    path: '/notifications/unread-count',
    tag: 'Notifications',
    summary: "How many of the calling user's notifications are unread (archived ones excluded)",
    auth: USER,
    responses: { 200: { description: 'The count', schema: UnreadCount }, ...feedErrors },
    handler: async ({ auth }) => {
      const { orgId, userId } = userOf(auth);
      return feed.unreadCount(deps, orgId, userId);
    },
  });

  routes.add({
    method: 'post',
    path: '/notifications/read-all',
    tag: 'Notifications',
    summary: 'Mark every unread notification of the calling user read',
    auth: USER,
    responses: { 200: { description: 'How many were marked', schema: ReadAllResult }, ...feedErrors },
    handler: async ({ auth }) => {
      const { orgId, userId } = userOf(auth);
      return feed.markAllRead(deps, orgId, userId);
    },
  });

  routes.add({
    method: 'post',
    path: '/notifications/{notification_id}/read',
    tag: 'Notifications',
    summary: 'Mark one notification read (a repeat keeps the first read_at)',
    auth: USER,
    params: NotificationParams,
    responses: { 200: { description: 'The item', schema: NotificationItem }, ...feedErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const { orgId, userId } = userOf(auth);
      return feed.markRead(deps, orgId, userId, params.notification_id);
    },
  });

  routes.add({
    method: 'post',
    path: '/notifications/{notification_id}/archive',
    tag: 'Notifications',
    summary: 'Archive one notification: it leaves the feed and the unread count',
    auth: USER,
    params: NotificationParams,
    responses: { 200: { description: 'The archived item', schema: NotificationItem }, ...feedErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => {
      const { orgId, userId } = userOf(auth);
      return feed.archive(deps, orgId, userId, params.notification_id);
    },
  });

  routes.add({
    method: 'get',
    path: '/notification-preferences',
    tag: 'Notifications',
    summary: "The calling user's preference for every subscribable event, the catalog's defaults where unset",
    auth: USER,
    responses: { 200: { description: 'In catalog order', schema: PreferenceList }, ...feedErrors },
    handler: async ({ auth }) => {
      const { orgId, userId } = userOf(auth);
      return preferences.listPreferences(deps, orgId, userId);
    },
  });

  routes.add({
    method: 'patch',
    path: '/notification-preferences/{event_type}',
    tag: 'Notifications',
    summary: "Change the calling user's preference for one event type: only the fields sent change",
    auth: USER,
    params: PreferenceParams,
    body: PreferencePatch,
    responses: {
      200: { description: 'The preference now in effect', schema: Preference },
      400: { description: 'Empty body, unregistered event_type, or an always-send event (it ignores preferences)', schema: ErrorBody },
      ...feedErrors,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => {
      const { orgId, userId } = userOf(auth);
      return preferences.updatePreference(deps, orgId, userId, params.event_type, body);
    },
  });
}
