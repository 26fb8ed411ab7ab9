import * as db from '../../db/notifications';
import { findEventDefinition } from '../../domain/notification-events';
import { describeEvent, effectivePreference, renderImmediateEmail, type NotificationEvent } from '../../domain/notifications';
import { publicBaseUrl } from '../../platform/core/config';
import type { DeliveryResult } from '../../workflows/notification-messages';
import type { ServiceDeps } from '../deps';

// Delivery, the notification actor's first step: who hears of each event, and how.

/**
 * Resolves each event's recipients (explicit ones, the deal's owner and new owner, subscribers; for an
 * always-send alert nobody was named for, the organization's admins), applies their preferences, and
 * writes in-app items, queued immediate emails and digest entries in one transaction. Everything is
 * keyed by event and user, so delivering the same events again changes nothing.
 */
export async function deliverEvents(
  deps: Pick<ServiceDeps, 'sql'> & Partial<Pick<ServiceDeps, 'config'>>,
  orgId: string,
  events: NotificationEvent[],
): Promise<DeliveryResult> {
  const known = events.filter((e) => findEventDefinition(e.event_type));
  if (known.length === 0) return { items: 0, emails: 0, digestEntries: 0 };
  const ownerIds = new Set<string>();
  const explicitIds = new Set<string>();
  for (const e of known) {
    for (const id of e.recipient_user_ids) explicitIds.add(id);
    if (e.entity_type === 'deal')
      for (const k of ['owner_id', 'new_owner_id']) if (typeof e.payload[k] === 'string') ownerIds.add(e.payload[k] as string);
  }
  const types = [...new Set(known.map((e) => e.event_type))];
  const [owners, explicit, subscriberLists, admins] = await Promise.all([
    db.membersByExternalIds(deps.sql, orgId, [...ownerIds]),
    db.membersByIds(deps.sql, orgId, [...explicitIds]),
    Promise.all(types.map(async (t) => [t, await db.subscribersOf(deps.sql, orgId, t)] as const)),
    known.some((e) => findEventDefinition(e.event_type)!.always_send) ? db.organizationAdmins(deps.sql, orgId) : Promise.resolve([]),
  ]);
  const byExternal = new Map(owners.map((r) => [r.external_id, r]));
  const byId = new Map([...owners, ...explicit, ...admins, ...subscriberLists.flatMap(([, l]) => l)].map((r) => [r.user_id, r]));
  const subscribers = new Map(subscriberLists.map(([t, l]) => [t, l.map((r) => r.user_id)]));
  const stored = await db.preferencesOf(deps.sql, orgId, [...byId.keys()], types);
  const prefOf = new Map(stored.map((p) => [`${p.user_id}|${p.event_type}`, p]));

  const items: db.NewItem[] = [];
  const emails: db.NewEmail[] = [];
  const digest: db.DigestEntry[] = [];
  for (const e of known) {
    const def = findEventDefinition(e.event_type)!;
    const recipients = new Set<string>();
    for (const id of e.recipient_user_ids) if (byId.has(id)) recipients.add(id);
    if (e.entity_type === 'deal') {
      for (const k of ['owner_id', 'new_owner_id']) {
        const member = typeof e.payload[k] === 'string' ? byExternal.get(e.payload[k] as string) : undefined;
        if (member) recipients.add(member.user_id);
      }
    }
    for (const id of subscribers.get(e.event_type) ?? []) recipients.add(id);
    // Nobody is told about their own change; an operational alert reaches someone whatever happens.
    if (!def.always_send && e.actor_user_id) recipients.delete(e.actor_user_id);
    if (def.always_send && recipients.size === 0) for (const a of admins) recipients.add(a.user_id);

    // Notices one acts on end with their link (the thread, the reconnect), in the feed, the email and the digest.
    const { title, body, link } = describeEvent(e, { baseUrl: deps.config ? publicBaseUrl(deps.config) : undefined });
    const createdAt = new Date(e.created_at);
    for (const userId of recipients) {
      const pref = effectivePreference(def, prefOf.get(`${userId}|${e.event_type}`));
      if (pref.in_app) {
        items.push({
          user_id: userId,
          event_id: e.id,
          event_type: e.event_type,
          category: def.category,
          entity_type: e.entity_type,
          entity_id: e.entity_id,
          title,
          body,
          payload: link ? { ...e.payload, link } : e.payload,
          created_at: createdAt,
        });
      }
      const address = byId.get(userId)?.email;
      if (!address || pref.email_cadence === 'off') continue;
      if (pref.email_cadence === 'immediate') {
        const mail = renderImmediateEmail({ title, body });
        emails.push({
          user_id: userId,
          idempotency_key: `immediate:${e.id}:${userId}`,
          kind: 'immediate',
          to_address: address,
          subject: mail.subject,
          text_body: mail.text,
          html_body: mail.html,
        });
      } else {
        digest.push({ user_id: userId, event_id: e.id, event_type: e.event_type, title, body, created_at: createdAt });
      }
    }
  }
  return deps.sql.begin(async (tx) => ({
    items: await db.insertItems(tx, orgId, items),
    emails: await db.insertEmails(tx, orgId, emails),
    digestEntries: await db.insertDigestEntries(tx, orgId, digest),
  }));
}
