// Removing secrets from text we did not write (an outside server's error answer, which may echo the
// request we sent) before it reaches an error field, a log line, a notification or a workflow history.
// A server echoes a secret the way the request carried it: as is, URL- or form-encoded, JSON-escaped,
// or base64 (HTTP Basic: `base64(id:secret)`, where the secret sits at any byte offset). Each such form
// is removed; a base64 run that carries the secret is removed whole, so no fragment of it remains.

/** Shorter values are not treated as secrets: they would match ordinary words. */
const MIN_SECRET_LENGTH = 4;
/** A base64 fragment must be this long to be searched for (3 bytes of the secret). */
const MIN_BASE64_CORE = 4;
export const REDACTED = '[redacted]';

const BASE64_RUN = /[A-Za-z0-9+/_=-]/;
const BASE64_TOKENS = /[A-Za-z0-9+/_-]{6,}={0,2}/g;

/** encodeURIComponent, which throws on a lone surrogate; then the form encoding (which replaces it) stands in. */
const uriEncoded = (s: string) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return formEncoded(s);
  }
};
const formEncoded = (s: string) => new URLSearchParams({ v: s }).toString().slice(2);
const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
const jsonEscaped = (s: string) => JSON.stringify(s).slice(1, -1);
const asciiJsonEscaped = (s: string) =>
  jsonEscaped(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The text forms a secret takes in a request or in an echo of one. */
function textForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  for (const encoded of [uriEncoded(secret), formEncoded(secret)]) {
    forms.add(encoded);
    forms.add(lowerHex(encoded));
  }
  for (const form of [...forms]) {
    forms.add(jsonEscaped(form));
    forms.add(asciiJsonEscaped(form));
    forms.add(jsonEscaped(form).replace(/\//g, '\\/'));
  }
  return [...forms];
}

/**
 * The part of base64(x) that is the same wherever `bytes` sit in x: for each of the three alignments,
 * the groups made of the secret's bytes only (standard and URL-safe alphabets).
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (const shift of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const end = (shift + bytes.length) % 3 === 0 ? encoded.length : encoded.length - 4;
    const core = encoded.slice(shift === 0 ? 0 : 4, end);
    if (core.length >= MIN_BASE64_CORE) cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return cores;
}

/** Replaces every occurrence of `core`, widened to the whole base64 run around it. */
function redactRuns(text: string, core: string): string {
  let out = text;
  let at = out.indexOf(core);
  while (at !== -1) {
    let start = at;
    let end = at + core.length;
    while (start > 0 && BASE64_RUN.test(out[start - 1]!)) start -= 1;
    while (end < out.length && BASE64_RUN.test(out[end]!)) end += 1;
    out = out.slice(0, start) + REDACTED + out.slice(end);
    at = out.indexOf(core, start + REDACTED.length);
  }
  return out;
}

/** `text` without any form of any of `secrets` (literal, URL/form-encoded, JSON-escaped, base64). */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  const forms = new Set<string>();
  const cores = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) continue;
    for (const form of textForms(secret)) {
      forms.add(form);
      for (const core of base64Cores(Buffer.from(form, 'utf8'))) cores.add(core);
    }
  }
  if (forms.size === 0) return text;
  // Base64 first: a run that decodes to text carrying a secret goes whole (any alignment, any length);
  // then runs carrying a secret's fixed fragment (a run that starts mid-group); then the text forms.
  const decodes = (run: string) => {
    const decoded = Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
    return [...forms].some((form) => decoded.includes(form));
  };
  let out = text.replace(BASE64_TOKENS, (run) => (decodes(run) ? REDACTED : run));
  for (const core of [...cores].sort((x, y) => y.length - x.length)) out = redactRuns(out, core);
  for (const form of [...forms].sort((x, y) => y.length - x.length)) out = out.split(form).join(REDACTED);
  return out;
}

/** Every string inside a value (a credential's value may nest objects and arrays). */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}
