import * as chrono from 'chrono-node';
import { ACCOUNT_INDUSTRIES } from '../accounts';
import { DEAL_STAGES } from '../deals';
import { EMAIL, clauseWith, contactFieldsSaid, newPersonSaid, valueAfter } from './chat-fields';
import { fold, phrase, words } from './text';
import type { ValueIndex, ValueMatch } from './values';

/**
 * What a chat message asks for, by rule: a change to one named record (rename, update the named fields,
 * move a deal's stage, add a note or activity, add a contact), the summary of one record, or a read that
 * the analytics parser answers. A change carries exactly the fields the message names. Bulk changes,
 * deletions and messages to people are declined; a name that matches several records is asked about.
 */

export type RecordKind = 'accounts' | 'deals' | 'contacts';

export type Target = { entity: RecordKind; name: string } | { entity: 'deals'; ofAccount: string };

export type ChatIntent =
  | { kind: 'write'; tool: 'update_account' | 'update_deal' | 'update_contact'; target: Target; changes: Record<string, unknown> }
  | { kind: 'write'; tool: 'move_deal_stage'; target: Target; stage: string }
  | { kind: 'write'; tool: 'create_activity'; target: Target; type: string; subject: string }
  | {
      kind: 'write';
      tool: 'create_contact';
      target: Target;
      contact: { first_name?: string; last_name?: string; email?: string; title?: string; phone?: string };
    }
  | { kind: 'summary'; target: Target }
  | { kind: 'clarify'; text: string; options: string[] }
  | { kind: 'refuse'; text: string }
  | { kind: 'read' };

export const CHAT_CAPABILITIES =
  'I can find and filter accounts, contacts and deals, summarise one record, answer totals, counts and pipeline questions, and propose one change at a time for your approval: rename or update an account, contact or deal, move a deal to another stage, add a note or activity, or add a contact.';

const REFUSED =
  /\b(delete|remove|wipe|erase|purge|destroy|drop|truncate)\b|\b(send|email|e-mail|blast|message|text|sms)\b.{0,40}\b(all|every|everyone|everybody|each)\b|\b(send|blast)\b/;
const WRITE_VERB =
  /^(?:(?:please|pls|can you|could you|would you|kindly|go ahead and|i want you to|let's|lets)\s+)*(rename|change|update|set|move|mark|advance|push|bump|add|create|log|record|write|note|make|reassign|assign|put|close|edit|modify|switch|hand)\b/;
const STAGE_WORDS: [RegExp, string][] = [
  [/\b(closed[ _-]?won|won|win|signed|close it as won|as won)\b/, 'closed_won'],
  [/\b(closed[ _-]?lost|lost|fell through|dead|as lost)\b/, 'closed_lost'],
  [/\b(negotiation|negotiating)\b/, 'negotiation'],
  [/\b(qualification|qualifying|qualified)\b/, 'qualification'],
  [/\b(proposal)\b/, 'proposal'],
  [/\b(prospecting|prospect)\b/, 'prospecting'],
];

/** The text a change carries: in quotes, after a colon, or after "saying"/"subject". */
function payloadOf(message: string): { text: string | null; rest: string } {
  const quoted = message.match(/["“”]([^"“”]{1,1000})["“”]/);
  if (quoted) return { text: quoted[1]!.trim(), rest: message.replace(quoted[0], ' ') };
  const colon = message.match(/:\s*(.{1,1000})$/s);
  if (colon && !/^\/\//.test(colon[1]!)) return { text: colon[1]!.trim().replace(/[.!]$/, ''), rest: message.slice(0, colon.index) };
  const saying = message.match(/\b(?:saying|that says|with the subject|subject)\s+(.{1,1000})$/is);
  if (saying) return { text: saying[1]!.trim().replace(/[.!]$/, ''), rest: message.slice(0, saying.index) };
  return { text: null, rest: message };
}

const NUMBER = /(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(k|m|thousand|million)?\b/;
const toNumber = (n: string, unit?: string) =>
  Number(n.replace(/,/g, '')) * (unit === 'k' || unit === 'thousand' ? 1000 : unit === 'm' || unit === 'million' ? 1_000_000 : 1);

export interface IntentContext {
  index: ValueIndex;
  today: Date;
}

export function parseChatIntent(message: string, ctx: IntentContext): ChatIntent {
  const text = phrase(message);
  if (!text) return { kind: 'refuse', text: CHAT_CAPABILITIES };
  if (REFUSED.test(text)) return { kind: 'refuse', text: `I cannot delete records or send messages from here. ${CHAT_CAPABILITIES}` };

  const { text: payload, rest } = payloadOf(message);
  const tokens = words(rest);
  const { matches, ambiguous } = ctx.index.match(tokens, new Set());
  const names = matches.filter((m) => m.field === 'name' && ['accounts', 'deals', 'contacts'].includes(m.entity));
  const owners = matches.filter((m) => m.field === 'owner_id');
  const restText = tokens.join(' ');
  const stage = STAGE_WORDS.find(([re]) => re.test(restText))?.[1] ?? null;
  const mentionsDeal = /\b(deal|deals|opportunity|opp)\b/.test(restText);

  const wantsWrite =
    WRITE_VERB.test(text) ||
    /\b(now has|is now|are now|is worth|will now|belongs to|should be called|new title|new email|has a new|is in (the )?[a-z ]+ now|is in the [a-z ]+ (stage|industry)|fell through|we (won|lost)|just called|note on|note for|record it|log it|update its|change its)\b/.test(
      text,
    ) ||
    // A new fact about a record: "Hooli's domain is hooli.io now".
    /\bnow[.!]?$/.test(text) ||
    /\b(phone|phone number|email|email address|title|job title|domain|website|department) is\b/.test(text) ||
    /\b(moved to|moves to|joined|transferred to|switched to)\b/.test(text) ||
    /^(?:a )?new (contact|person|lead)\b/.test(text) ||
    /\bgive\b.+\bto [a-z]/.test(text) ||
    (payload !== null && /\b(note|call|meeting|email|task)\b/.test(text));

  // A new person at an account, with every field the message gives them (their name may share a word with a contact's).
  const accountNamed = matches
    .filter((m) => m.field === 'name' && m.entity === 'accounts')
    .sort((a, b) => b.end - b.start - (a.end - a.start))[0];
  const adding =
    /\b(add|create|new|added)\b/.test(text) &&
    (WRITE_VERB.test(text) || /\bnew (contact|person|lead)\b/.test(text) || /\bhas a new\b/.test(text));
  if (adding && accountNamed && !/\b(note|call|meeting|task|deal|activity)\b/.test(restText.replace(/\b(phone|email|title)\b.*$/, ''))) {
    const said = newPersonSaid(message, accountNamed.value);
    const existing = said.fields.first_name
      ? matches.find(
          (m) => m.entity === 'contacts' && m.field === 'name' && m.value === `${said.fields.first_name} ${said.fields.last_name}`,
        )
      : undefined;
    if (said.fields.first_name && !existing) {
      const missing = said.named.filter((f) => !(f in said.fields));
      if (missing.includes('department'))
        return {
          kind: 'refuse',
          text: `A new contact is added without a department; set it once the contact exists. ${CHAT_CAPABILITIES}`,
        };
      if (missing.length)
        return {
          kind: 'clarify',
          options: [],
          text: `I could not read the new contact's ${missing.join(' and ')}: say it again with the value.`,
        };
      return { kind: 'write', tool: 'create_contact', target: { entity: 'accounts', name: accountNamed.value }, contact: said.fields };
    }
  }

  // Names that match several records: ask which (a deal spoken of through its account is checked later).
  const nameAmbiguity = ambiguous.find((a) => a.candidates.some((c) => c.field === 'name'));
  if (nameAmbiguity && !names.some((n) => n.entity === 'deals')) {
    const options = [...new Set(nameAmbiguity.candidates.map((c) => c.value))].sort();
    return { kind: 'clarify', options, text: `"${nameAmbiguity.said}" matches ${options.join(' and ')}. Which one do you mean?` };
  }

  const pick = (kind: RecordKind): ValueMatch | undefined =>
    names.filter((n) => n.entity === kind).sort((a, b) => b.end - b.start - (a.end - a.start))[0];
  const deal = pick('deals');
  const account = pick('accounts');
  const contact = pick('contacts');
  const dealTarget: Target | null = deal
    ? { entity: 'deals', name: deal.value }
    : account && mentionsDeal
      ? { entity: 'deals', ofAccount: account.value }
      : null;

  if (wantsWrite) {
    // A new contact at an account.
    if (/\b(contact|person|her|him|them)\b/.test(restText) && /\b(add|create|new)\b/.test(restText) && account && !contact) {
      const email = message.match(EMAIL)?.[0];
      const person =
        (payload ?? '').match(/^\s*([\p{Lu}][\p{L}'-]+)\s+([\p{Lu}][\p{L}'-]+)/u) ??
        message.match(/(?:named|called|person,?|contact,?)\s+([\p{Lu}][\p{L}'-]+)\s+([\p{Lu}][\p{L}'-]+)/u) ??
        firstFullName(message, account.value);
      const title = message.match(/\bas (?:an? |the |our )?([\p{Lu}][\p{L} ]{1,60}?)(?=[,.;]| at | to |$)/u)?.[1];
      const contactFields = {
        ...(person ? { first_name: person[1]!, last_name: person[2]! } : {}),
        ...(email ? { email } : {}),
        ...(title && !/contact/i.test(title) ? { title: title.trim() } : {}),
      };
      if (Object.keys(contactFields).length)
        return { kind: 'write', tool: 'create_contact', target: { entity: 'accounts', name: account.value }, contact: contactFields };
    }
    // A note or activity on an account.
    const activity = restText.match(/\b(note|call|called|phone call|meeting|met|email|emailed|task)\b/);
    const renaming = /\b(rename|renamed|be called|should be called|name)\b/.test(restText);
    if (
      activity &&
      payload &&
      !renaming &&
      (account || contact) &&
      !/\b(title|name|email address)\b/.test(restText.replace(/\bnote\b/, ''))
    ) {
      const type = { called: 'call', 'phone call': 'call', met: 'meeting', emailed: 'email' }[activity[1]!] ?? activity[1]!;
      const on = account ?? null;
      if (on) return { kind: 'write', tool: 'create_activity', target: { entity: 'accounts', name: on.value }, type, subject: payload };
    }
    // A deal's stage.
    if (dealTarget && stage && !/\b(value|amount|worth|close date|closing date|close on)\b/.test(restText))
      return { kind: 'write', tool: 'move_deal_stage', target: dealTarget, stage };
    // Fields of a deal, a contact or an account.
    if (dealTarget) {
      const changes = dealChanges(
        restText,
        rest,
        payload,
        ctx.today,
        owners.map((o) => o.value),
      );
      if (Object.keys(changes).length) return { kind: 'write', tool: 'update_deal', target: dealTarget, changes };
    }
    if (contact) {
      const { changes, named } = contactFieldsSaid(message, payload);
      const missing = named.filter((f) => !(f in changes));
      if (Object.keys(changes).length && missing.length)
        return {
          kind: 'clarify',
          options: [],
          text: `I read ${Object.keys(changes).join(' and ')} for ${contact.value} but not the new ${missing.join(' and ').replace(/_/g, ' ')}: say it again with the value.`,
        };
      if (Object.keys(changes).length)
        return { kind: 'write', tool: 'update_contact', target: { entity: 'contacts', name: contact.value }, changes };
    }
    if (account) {
      const changes = accountChanges(
        restText,
        rest,
        payload,
        owners.map((o) => o.value),
        account,
      );
      if (Object.keys(changes).length)
        return { kind: 'write', tool: 'update_account', target: { entity: 'accounts', name: account.value }, changes };
    }
    if (WRITE_VERB.test(text)) return { kind: 'refuse', text: `I could not tell which record to change, or how. ${CHAT_CAPABILITIES}` };
  }

  // One record's summary: "tell me about Hooli".
  const one = deal ?? contact ?? account;
  if (
    one &&
    /\b(tell me about|about|summary|summarise|summarize|overview|rundown|going on with|what do we know|brief me|details|info)\b/.test(
      text,
    ) &&
    names.length === 1
  ) {
    return { kind: 'summary', target: { entity: one.entity as RecordKind, name: one.value } };
  }
  return { kind: 'read' };
}

function dealChanges(text: string, raw: string, payload: string | null, today: Date, owners: string[]): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  if (/\b(value|amount|worth|price|size)\b/.test(text)) {
    const after = text.replace(/\b\w+ deal \d+\b/g, ' ').replace(/^.*?\b(value|amount|worth|price|size)\b/, '');
    const n = after.match(NUMBER);
    if (n) changes.value = toNumber(n[1]!, n[2]);
  }
  if (/\b(close date|closing date|close on|closes on|will now close|close)\b/.test(text) && !/\bas (won|lost)\b/.test(text)) {
    const found = chrono
      .parse(raw.replace(/\b\w+ deal \d+\b/gi, ' '), { instant: today, timezone: 'UTC' }, { forwardDate: true })
      .find((r) => !/^(right )?now$|^today$/i.test(r.text));
    if (found?.start.isCertain('day') || found?.start.isCertain('month')) {
      const d = found.start;
      changes.close_date = `${d.get('year')}-${String(d.get('month')).padStart(2, '0')}-${String(d.get('day')).padStart(2, '0')}`;
    }
  }
  if (/\b(rename|should be called|name)\b/.test(text) && payload) changes.name = payload;
  if (/\b(owner|owns|reassign|assign|give|hand|belongs to)\b/.test(text)) {
    const owner =
      owners[0] ?? text.match(/\b(?:to|by)\s+([a-z][\w.@-]*)\s*$/)?.[1] ?? text.match(/\bmake\s+([a-z][\w.@-]*)\s+the owner\b/)?.[1];
    if (owner) changes.owner_id = owner;
  }
  if (/\b(currency|priced in|switch|in (usd|eur|gbp|euros?|dollars?|pounds?))\b/.test(text)) {
    const currency = text.match(/\b(usd|eur|gbp|chf|jpy|cad|aud|euros?|dollars?|pounds?)\b/)?.[1];
    const code =
      currency &&
      ({ euro: 'EUR', euros: 'EUR', dollar: 'USD', dollars: 'USD', pound: 'GBP', pounds: 'GBP' }[currency] ?? currency.toUpperCase());
    if (code) changes.currency = code;
  }
  return changes;
}

/** The first two capitalised words in a row that are neither the account's name nor a sentence's first word. */
function firstFullName(message: string, account: string): RegExpMatchArray | null {
  for (const m of message.matchAll(/(?<=[\s(,:])([\p{Lu}][\p{L}'-]+)\s+([\p{Lu}][\p{L}'-]+)/gu)) {
    if (!account.includes(m[1]!) && !account.includes(m[2]!)) return m;
  }
  return null;
}

function accountChanges(
  spoken: string,
  raw: string,
  payload: string | null,
  owners: string[],
  account: ValueMatch,
): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  // What was said after a colon counts too ("Update Wonka: industry retail, 450 employees").
  const text = payload ? `${spoken} ${fold(payload)}` : spoken;
  if (/\b(rename|renamed|should be called|be called|name)\b/.test(text)) {
    const name = payload ?? raw.match(/\b(?:to|called|as)\s+(.+?)[.!]?$/i)?.[1]?.trim();
    if (name && fold(name) !== fold(account.value)) changes.name = name;
  }
  const industryClause = clauseWith(payload ?? raw, /\b(industry|sector|vertical)\b/i);
  if (industryClause) {
    const said =
      industryClause.match(/\bin the (.+?) (?:industry|sector)\b/i)?.[1] ??
      industryClause.match(/\bto\s*:?\s+(.+?)[.!]?$/i)?.[1] ??
      valueAfter(industryClause, 'industry|sector|vertical');
    const industry = said ? industryOf(said) : null;
    if (industry) changes.industry = industry;
  } else {
    // "Wonka is in retail now": an industry said without the word.
    const said = raw.match(/\bis (?:now )?in (?:the )?([a-z][a-z _-]{2,40}?)(?: now)?(?=\s+(?:and|now)\b|[.,!]|$)/i)?.[1];
    const industry = said ? industryOf(said) : null;
    if (industry) changes.industry = industry;
  }
  if (/\b(owner|owns|reassign|assign|belongs to|owned by)\b/.test(text)) {
    const owner =
      owners[0] ?? text.match(/\b(?:to|by)\s+([a-z][\w.@-]*)\s*$/)?.[1] ?? text.match(/\bmake\s+([a-z][\w.@-]*)\s+the owner\b/)?.[1];
    if (owner) changes.owner_id = owner;
  }
  if (/\b(employees|employee count|headcount|staff|people)\b/.test(text)) {
    const clause = clauseWith(payload ?? raw, /\b(employees|employee count|headcount|staff|people)\b/i) ?? text;
    const n = clause.toLowerCase().match(NUMBER);
    if (n) changes.employee_count = Math.round(toNumber(n[1]!, n[2]));
  }
  if (/\b(domain)\b/.test(text)) {
    const domain = raw.match(/\b([a-z0-9-]+(?:\.[a-z0-9-]+)+)\b/i)?.[1];
    if (domain) changes.domain = domain.toLowerCase();
  }
  if (/\b(website|site|url)\b/.test(text)) {
    const url = raw.match(/https?:\/\/\S+/)?.[0];
    if (url) changes.website = url.replace(/[.,!]$/, '');
  }
  if (/\b(description)\b/.test(text) && payload) changes.description = payload;
  return changes;
}

/** An industry as the API stores it (consumer goods → consumer_goods), or null when it is none of them. */
function industryOf(said: string): string | null {
  const key = fold(said)
    .replace(/\b(the|industry|sector|now|account)\b/g, ' ')
    .trim()
    .replace(/[\s-]+/g, '_')
    .replace(/[^a-z_]/g, '');
  return (ACCOUNT_INDUSTRIES as readonly string[]).includes(key) ? key : null;
}

export const isDealStage = (stage: string) => (DEAL_STAGES as readonly string[]).includes(stage);
