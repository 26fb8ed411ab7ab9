/**
 * The fields a chat message names for one record, each with the value said in its own clause: "title VP
 * Sales, email anna@globex.io", "her title is now VP Sales and her email is anna@globex.io", "moved to the
 * Finance department", and a new person's name, title, email and phone. A field named without a value
 * the rules can read is reported, so the chat asks instead of proposing less than was said.
 */

export const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/;
const PHONE = /\+?\d[\d ()./-]{5,}\d/;

const FIELD_WORDS =
  'title|job title|role|position|e-?mail|email address|phone|phone number|mobile|department|dept|team|industry|sector|employees|employee count|headcount|owner|domain|website|name|value|amount|close date|currency|first name|last name|surname';

/** The message cut where one field's clause ends and another's begins: at ; , and "and" before a field's word. */
export function clauses(message: string): string[] {
  return message
    .split(
      new RegExp(`\\s*(?:;|,(?!\\d{3}\\b)|\\band\\b(?=\\s+(?:(?:her|his|its|their|the)\\s+)?(?:${FIELD_WORDS}|has|is|now)\\b))\\s*`, 'i'),
    )
    .map((c) => c.trim())
    .filter(Boolean);
}

/** The clause that names a field, or null. */
export const clauseWith = (message: string, keyword: RegExp): string | null => clauses(message).find((c) => keyword.test(c)) ?? null;

/** The value after a field's word in its clause: "title is now X", "title: X", "title to X", "title X", quoted first. */
export function valueAfter(clause: string, keyword: string): string | null {
  const quoted = clause.match(/["“”]([^"“”]{1,300})["“”]/);
  if (quoted) return quoted[1]!.trim();
  // "the title of Anna Globex to VP Sales"
  const ofTo = clause.match(new RegExp(`\\b(?:${keyword})\\b\\s+of\\s+.+?\\s+to\\s+(.+?)\\s*[.!]?\\s*$`, 'i'));
  if (ofTo) return ofTo[1]!.trim();
  const after = clause.match(
    new RegExp(
      `\\b(?:${keyword})\\b(?:\\s+of\\s+.+?)?\\s*(?:is\\s+(?:now\\s+)?|to\\s+|:\\s*|=\\s*|should be\\s+|will be\\s+)?(.+?)\\s*(?:now)?[.!]?\\s*$`,
      'i',
    ),
  );
  const value = after?.[1]?.trim().replace(/^(?:the|a|an)\s+/i, '');
  return value && !new RegExp(`^(?:${keyword})$`, 'i').test(value) ? value : null;
}

/** What a contact's fields become, as said; `named` lists every field the message names, read or not. */
export function contactFieldsSaid(message: string, payload: string | null): { changes: Record<string, string>; named: string[] } {
  const source = payload && new RegExp(`\\b(${FIELD_WORDS})\\b`, 'i').test(payload) ? payload : message;
  const changes: Record<string, string> = {};
  const named: string[] = [];
  const text = message.toLowerCase();
  if (/\b(e-?mail|email address)\b/.test(text) || (/\baddress\b/.test(text) && EMAIL.test(message))) {
    named.push('email');
    const email = (clauseWith(source, /e-?mail|address|@/i) ?? message).match(EMAIL)?.[0] ?? message.match(EMAIL)?.[0];
    if (email) changes.email = email;
  }
  if (/\b(title|job title|role|position)\b/.test(text)) {
    named.push('title');
    const clause = clauseWith(source, /\b(title|role|position)\b/i);
    const value = (payload && source === message ? payload : null) ?? (clause ? valueAfter(clause, 'job title|title|role|position') : null);
    if (value && !EMAIL.test(value)) changes.title = value;
  }
  if (/\b(phone|mobile|cell|telephone)\b/.test(text)) {
    named.push('phone');
    const phone = (clauseWith(source, /\b(phone|mobile|cell|telephone|number)\b/i) ?? message).match(PHONE)?.[0];
    if (phone) changes.phone = phone.trim();
  }
  if (/\b(department|dept|team)\b/.test(text)) {
    named.push('department');
    const clause = clauseWith(source, /\b(department|dept|team)\b/i) ?? message;
    const value =
      clause.match(/\b(?:to|in|into|joined|joins|moved to)\s+(?:the\s+)?([\p{L}&][\p{L}& -]{0,60}?)\s+(?:department|dept|team)\b/iu)?.[1] ??
      valueAfter(clause, 'department|dept|team');
    if (value) changes.department = value.trim();
  }
  const said = (field: string) =>
    payload ??
    message.match(new RegExp(`(?:${field})\\s+(?:is\\s+(?:now\\s+)?|to\\s+|:\\s*)([\\p{L}'-]+)`, 'iu'))?.[1] ??
    message.match(/\bto\s+([\p{L}'-]+)[.!]?\s*$/u)?.[1];
  if (/\b(last name|surname|family name|married)\b/.test(text)) {
    named.push('last_name');
    const value = said('last name|surname|family name');
    if (value) changes.last_name = value;
  }
  if (/\bfirst name\b/.test(text)) {
    named.push('first_name');
    const value = said('first name');
    if (value) changes.first_name = value;
  }
  return { changes, named };
}

/**
 * A new person's fields: the name (two capitalised words that are not the account's), the email, the phone
 * and the title, said as "as CFO", "title X", "Name, Head of Security" or "a new COO, Name".
 */
export function newPersonSaid(
  message: string,
  account: string,
): { fields: { first_name?: string; last_name?: string; email?: string; title?: string; phone?: string }; named: string[] } {
  const fields: { first_name?: string; last_name?: string; email?: string; title?: string; phone?: string } = {};
  const named: string[] = [];
  const person =
    message.match(/(?:named|called|person,?|contact,?|contact:)\s+([\p{Lu}][\p{L}'-]+)\s+([\p{Lu}][\p{L}'-]+)/u) ??
    message.match(/:\s*([\p{Lu}][\p{L}'-]+)\s+([\p{Lu}][\p{L}'-]+)/u) ??
    fullName(message, account);
  if (person) {
    fields.first_name = person[1]!;
    fields.last_name = person[2]!;
  }
  const email = message.match(EMAIL)?.[0];
  if (email) fields.email = email;
  const lower = message.toLowerCase();
  if (/\b(phone|mobile|cell|telephone)\b/.test(lower)) {
    named.push('phone');
    const phone = message.match(/\b(?:phone|mobile|cell|telephone)(?: number)?\s*(?:is\s+|:\s*)?(\+?\d[\d ()./-]{5,}\d)/i)?.[1];
    if (phone) fields.phone = phone.trim();
  }
  const first = person?.[1];
  const last = person?.[2];
  const title =
    message.match(/\b(?:title|job title|role|position)\s*(?:is\s+|:\s*|of\s+)?([^,;.()@]{2,60}?)\s*(?=[,;.(]|$| at | with )/i)?.[1] ??
    message.match(/\bas (?:an? |the |our )?([\p{Lu}][\p{L}&' -]{1,60}?)(?=\s*(?:[,.;(]|$| at | to | with | for | in ))/u)?.[1] ??
    (first && last
      ? message.match(new RegExp(`${first}\\s+${last}\\s*,\\s*([\\p{Lu}][\\p{L}&' -]{1,60}?)\\s*(?=[,;.(]|$)`, 'u'))?.[1]
      : undefined) ??
    (first ? message.match(new RegExp(`\\bnew\\s+([\\p{Lu}][\\p{L}&' -]{1,40}?)\\s*[,:]\\s*${first}\\b`, 'u'))?.[1] : undefined);
  if (/\b(title|job title|role|position)\b/.test(lower)) named.push('title');
  if (title && !/\b(contact|person|phone|email|a contact|new contact)\b/i.test(title) && !PHONE.test(title)) fields.title = title.trim();
  if (/\b(department|dept)\b/.test(lower)) named.push('department');
  return { fields, named };
}

/** The first two capitalised words in a row that are neither the account's name nor a sentence's first word. */
function fullName(message: string, account: string): RegExpMatchArray | null {
  for (const m of message.matchAll(/(?<=[\s(,:])([\p{Lu}][\p{L}'-]+)\s+([\p{Lu}][\p{L}'-]+)/gu)) {
    if (!account.includes(m[1]!) && !account.includes(m[2]!) && !/^(Head|Chief|Vice|VP|Director|Manager|Add|New)$/.test(m[1]!)) return m;
  }
  return null;
}
