import { findEventDefinition, type EmailCadence, type NotificationEventDefinition } from './notification-events';

// Pure rules of notifications: effective preferences, what an event says, digest windows, email bodies.

/** An event as the organization's actor receives it (from the outbox). */
export interface NotificationEvent {
  /** The outbox row's id: the key the actor deduplicates on. */
  id: string;
  event_type: string;
  entity_type: string;
  entity_id: string;
  payload: Record<string, unknown>;
  actor_user_id: string | null;
  recipient_user_ids: string[];
  /** ISO 8601 */
  created_at: string;
}

export interface StoredPreference {
  in_app: boolean | null;
  email_cadence: EmailCadence | null;
}

export interface EffectivePreference {
  in_app: boolean;
  email_cadence: EmailCadence;
}

/** A recipient's preference for an event: what they set, the registry's defaults where unset; always-send ignores both. */
export function effectivePreference(def: NotificationEventDefinition, stored?: StoredPreference): EffectivePreference {
  if (def.always_send) return { in_app: true, email_cadence: 'immediate' };
  return { in_app: stored?.in_app ?? def.default_in_app, email_cadence: stored?.email_cadence ?? def.default_cadence };
}

/** Payload fields that name the deal an event concerns; the service overwrites them with stored values. */
export const DEAL_FACT_FIELDS = ['deal_id', 'deal_name', 'value', 'currency', 'owner_id', 'new_owner_id'] as const;

export function isClosedDealEvent(eventType: string): boolean {
  return eventType === 'deal.won' || eventType === 'deal.lost';
}

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.length > 0 ? value : typeof value === 'number' ? String(value) : null;

/** `1,250.00 EUR`; null when the event carries no value. */
function money(payload: Record<string, unknown>): string | null {
  const value = payload.value;
  if (typeof value !== 'number' && typeof value !== 'string') return null;
  const amount = Number(value);
  if (!Number.isFinite(amount)) return null;
  const formatted = amount.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return text(payload.currency) ? `${formatted} ${String(payload.currency)}` : formatted;
}

/** Where a notice's reader acts on it: a label and a URL of the service. */
export interface NoticeLink {
  label: string;
  url: string;
}

/** `Ada Lovelace <ada@example.com>`, the address alone, the name alone, or null. */
function person(name: unknown, email: unknown): string | null {
  const n = text(name)?.trim();
  const e = text(email)?.trim();
  if (n && e) return `${n} <${e}>`;
  return e ?? n ?? null;
}

const quoted = (value: unknown): string | null => (text(value) ? `“${text(value)}”` : null);

/** The path a reader acts on for an event (relative to the service's public URL), or null. */
export function eventLinkPath(event: Pick<NotificationEvent, 'event_type' | 'entity_type' | 'entity_id' | 'payload'>): {
  label: string;
  path: string;
} | null {
  const p = event.payload;
  const threadId = text(p.thread_id) ?? (event.entity_type === 'outreach_thread' ? event.entity_id : null);
  if (event.event_type.startsWith('outreach.') && threadId) {
    return { label: LINK_LABELS[0], path: `/outreach/sequencer/unibox/threads/${encodeURIComponent(threadId)}` };
  }
  const connectionId = text(p.connection_id) ?? (event.entity_type === 'integration_connection' ? event.entity_id : null);
  if (event.event_type === 'integration.needs_reconnect' && connectionId) {
    return { label: LINK_LABELS[1], path: `/integrations/connections/${encodeURIComponent(connectionId)}` };
  }
  return null;
}

/** The sentences of the outreach and integration notices: who, in which sequence, through which mailbox or account. */
function noticeSentences(event: Pick<NotificationEvent, 'event_type' | 'payload'>): { title: string; parts: string[] } | null {
  const p = event.payload;
  const contact = person(p.contact_name, p.contact_email ?? p.from) ?? 'A contact';
  const sequence = quoted(p.sequence_name);
  // `mailbox_email`, `detected` and `detail`: the names the send-time bounce writes (same meaning).
  const mailbox = person(p.mailbox_name, p.mailbox_address ?? p.mailbox_email);
  const where = [sequence ? `in sequence ${sequence}` : null, mailbox ? `through mailbox ${mailbox}` : null].filter(Boolean).join(' ');
  switch (event.event_type) {
    case 'outreach.reply_received': {
      const subject = quoted(p.subject);
      return {
        title: `Reply from ${contact}`,
        parts: [`${contact} answered${subject ? ` ${subject}` : ' an outreach email'}${where ? ` ${where}` : ''}.`],
      };
    }
    case 'outreach.message_bounced': {
      const subject = quoted(p.subject);
      const status = text(p.status);
      const diagnostic = text(p.diagnostic) ?? text(p.detail);
      const why = diagnostic ? (status && !diagnostic.includes(status) ? `${status} ${diagnostic}` : diagnostic) : status;
      const parts = [
        `The email${subject ? ` ${subject}` : ''} to ${contact}${where ? ` ${where}` : ''} bounced${(p.stage ?? p.detected) === 'smtp' ? ' (refused when sent)' : ''}${why ? `: ${why}` : ''}.`,
      ];
      const after: string[] = [];
      if (p.enrollment_stopped !== false) after.push('the enrollment stopped');
      if (p.suppressed !== false) after.push('the address is on the suppression list');
      if (after.length) parts.push(`${after.join(' and ').replace(/^t/, 'T')}.`);
      return { title: `Bounce: ${contact}`, parts };
    }
    case 'integration.needs_reconnect': {
      const integration = text(p.integration_name) ?? text(p.integration) ?? 'integration';
      const account = text(p.external_account_label);
      const id = text(p.connection_id);
      return {
        title: `Reconnect ${integration}${account ? `: ${account}` : ''}`,
        parts: [
          `The ${integration} account${account ? ` ${account}` : ''} lost its authorization (the provider refused its refresh token); what uses it stops until it is reconnected.`,
          ...(id
            ? [`To reconnect, mint a connect token with connection_id ${id} (POST /integrations/connect-tokens) and open its connect_url.`]
            : []),
        ],
      };
    }
    default:
      return null;
  }
}

/**
 * The title and one-line body of an event, as plain text (escaped where it becomes HTML). Built from
 * the payload's well-known fields; anything unknown falls back to the registry's label. With the
 * service's public URL, an event one acts on ends with its link (and returns it as `link`).
 */
export function describeEvent(
  event: Pick<NotificationEvent, 'event_type' | 'entity_type' | 'entity_id' | 'payload'>,
  options: { baseUrl?: string } = {},
): {
  title: string;
  body: string;
  link?: NoticeLink;
} {
  const def = findEventDefinition(event.event_type);
  const p = event.payload;
  const label = def?.label ?? event.event_type;
  const name = text(p.deal_name) ?? text(p.name) ?? text(p.title);
  let title = name ? `${label}: ${name}` : label;
  const parts: string[] = [];
  const notice = noticeSentences(event);
  if (notice) {
    title = notice.title;
    parts.push(...notice.parts);
  }
  switch (event.event_type) {
    case 'deal.stage_changed': {
      const from = text(p.old_stage) ?? text(p.old);
      const to = text(p.new_stage) ?? text(p.new) ?? text(p.stage);
      if (to) parts.push(from ? `Stage moved from ${from} to ${to}.` : `Stage is now ${to}.`);
      break;
    }
    case 'deal.owner_changed': {
      const to = text(p.new_owner_id) ?? text(p.owner_id);
      if (to) parts.push(`New owner: ${to}.`);
      break;
    }
    case 'deal.value_changed': {
      const old = text(p.old);
      const now = money(p);
      if (now) parts.push(old ? `Value changed from ${old} to ${now}.` : `Value is now ${now}.`);
      break;
    }
    case 'deal.created':
    case 'deal.won':
    case 'deal.lost': {
      const now = money(p);
      if (now) parts.push(`Value: ${now}.`);
      break;
    }
    default:
      break;
  }
  const message = notice ? null : (text(p.message) ?? text(p.reason) ?? text(p.error));
  if (message) parts.push(message);
  if (parts.length === 0) parts.push(def?.description ?? `${event.entity_type} ${event.entity_id}`);
  const where = options.baseUrl ? eventLinkPath(event) : null;
  const link = where ? { label: where.label, url: `${options.baseUrl!.replace(/\/+$/, '')}${where.path}` } : undefined;
  // The link is the body's last sentence, so the feed, the email and the digest all carry it.
  const body = parts.join(' ').slice(0, link ? 1500 : 2000);
  return { title: title.slice(0, 300), body: link ? `${body} ${link.label}: ${link.url}` : body, ...(link ? { link } : {}) };
}

// Digest windows ----------------------------------------------------------------------------------

export interface DigestSchedule {
  /** Length of a window; 86400 for a daily digest. */
  intervalSeconds: number;
  /** Where windows start within the interval (UTC): 8 * 3600 puts a daily digest at 08:00 UTC. */
  offsetSeconds: number;
}

/** The end of the window `atMs` falls in: the next time digests go out, strictly after `atMs`. */
export function nextDigestAt(atMs: number, schedule: DigestSchedule): number {
  const interval = schedule.intervalSeconds * 1000;
  const offset = (schedule.offsetSeconds * 1000) % interval;
  return Math.floor((atMs - offset) / interval) * interval + offset + interval;
}

// Email bodies ------------------------------------------------------------------------------------

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** Subjects are single-line. */
const subjectLine = (value: string): string => value.replace(/[\r\n]+/g, ' ').slice(0, 200);

const FOOTER_TEXT = 'You receive this because of your notification preferences; change them under /notification-preferences.';

/** The labels of the links notices end with (see describeEvent). */
const LINK_LABELS = ['Open the thread in the unibox', 'Reconnect it from its connection'] as const;
const LINK_TAIL = new RegExp(`(?:^|\\s)(${LINK_LABELS.join('|')}): (https?://[^\\s<>"']+)$`);

/**
 * Escaped text whose closing notice link (`<label>: <url>`, which describeEvent appends) becomes an
 * anchor. Only that trailing link: a URL anywhere else (a reply's subject) stays plain text.
 */
export function linkify(value: string): string {
  const m = LINK_TAIL.exec(value);
  if (!m) return escapeHtml(value);
  const head = value.slice(0, m.index + (m[0].startsWith(' ') ? 1 : 0));
  const url = escapeHtml(m[2]!);
  return `${escapeHtml(head)}<a href="${url}">${escapeHtml(m[1]!)}</a>`;
}

const page = (heading: string, inner: string): string =>
  `<!doctype html><html><body style="font-family:sans-serif"><h2>${escapeHtml(heading)}</h2>${inner}` +
  `<p style="color:#666;font-size:12px">${escapeHtml(FOOTER_TEXT)}</p></body></html>`;

export function renderImmediateEmail(item: { title: string; body: string }): RenderedEmail {
  return {
    subject: subjectLine(item.title),
    text: `${item.title}\n\n${item.body}\n\n--\n${FOOTER_TEXT}\n`,
    html: page(item.title, `<p>${linkify(item.body)}</p>`),
  };
}

export function renderDigestEmail(entries: { title: string; body: string; created_at: Date }[]): RenderedEmail {
  const count = entries.length;
  const heading = `Your notification digest: ${count} update${count === 1 ? '' : 's'}`;
  const lines = entries.map((e) => `- ${e.created_at.toISOString()}  ${e.title}\n  ${e.body}`);
  const rows = entries
    .map((e) => `<li><strong>${escapeHtml(e.title)}</strong><br>${linkify(e.body)}<br><small>${e.created_at.toISOString()}</small></li>`)
    .join('');
  return {
    subject: subjectLine(heading),
    text: `${heading}\n\n${lines.join('\n')}\n\n--\n${FOOTER_TEXT}\n`,
    html: page(heading, `<ul>${rows}</ul>`),
  };
}

// Deal changes --------------------------------------------------------------------------------------

export interface DealSnapshot {
  id: string;
  name: string;
  stage: string;
  value: number | null;
  currency: string | null;
  owner_id: string | null;
}

const moneyText = (value: number | null, currency: string | null): string | null =>
  value === null
    ? null
    : `${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}${currency ? ` ${currency}` : ''}`;

/**
 * The events a deal write produces: creation; a move into closed_won/closed_lost (won/lost, in place of
 * a stage change); another stage; a new owner (owner_id is the previous owner, new_owner_id the new
 * one, so both hear of it); a new value or currency.
 */
export function dealChangeEvents(
  before: DealSnapshot | null,
  after: DealSnapshot,
): { event_type: string; payload: Record<string, unknown> }[] {
  const base = {
    deal_id: after.id,
    deal_name: after.name,
    value: after.value,
    currency: after.currency,
    owner_id: after.owner_id,
    new_owner_id: after.owner_id,
    stage: after.stage,
  };
  const closeEvent = after.stage === 'closed_won' ? 'deal.won' : after.stage === 'closed_lost' ? 'deal.lost' : null;
  if (!before) return [{ event_type: 'deal.created', payload: base }, ...(closeEvent ? [{ event_type: closeEvent, payload: base }] : [])];
  const events: { event_type: string; payload: Record<string, unknown> }[] = [];
  if (before.stage !== after.stage) {
    events.push({
      event_type: closeEvent ?? 'deal.stage_changed',
      payload: { ...base, field: 'stage', old: before.stage, new: after.stage, old_stage: before.stage, new_stage: after.stage },
    });
  }
  if (before.owner_id !== after.owner_id) {
    events.push({
      event_type: 'deal.owner_changed',
      payload: {
        ...base,
        field: 'owner_id',
        owner_id: before.owner_id,
        new_owner_id: after.owner_id,
        old: before.owner_id,
        new: after.owner_id,
      },
    });
  }
  if (before.value !== after.value || before.currency !== after.currency) {
    events.push({
      event_type: 'deal.value_changed',
      payload: { ...base, field: 'value', old: moneyText(before.value, before.currency), new: moneyText(after.value, after.currency) },
    });
  }
  return events;
}
