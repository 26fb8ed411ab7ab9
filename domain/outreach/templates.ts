// Step templates: `{{variable}}` or `{{variable|fallback}}` taken from the contact, escaped in HTML.

/** The contact fields a template may name, and the enrollment's one-click unsubscribe link. */
export const TEMPLATE_VARIABLES = [
  'first_name',
  'last_name',
  'full_name',
  'email',
  'company',
  'title',
  'department',
  'phone',
  'unsubscribe_url',
] as const;
export type TemplateVariable = (typeof TEMPLATE_VARIABLES)[number];
export type TemplateValues = Partial<Record<TemplateVariable, string | null>>;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_]+)\s*(?:\|([^}]*))?\}\}/g;

/** Variables a template names that the service does not know (a save with any of them is refused). */
export function unknownVariables(template: string): string[] {
  const unknown = new Set<string>();
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (!(TEMPLATE_VARIABLES as readonly string[]).includes(match[1]!)) unknown.add(match[1]!);
  }
  return [...unknown];
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/**
 * Fills a template. A variable the contact has no value for becomes its fallback (`{{first_name|there}}`)
 * or, without one, the empty string. In HTML every value (and fallback) is escaped; the template's own
 * markup is the author's and stays.
 */
export function renderTemplate(template: string, values: TemplateValues, mode: 'text' | 'html'): string {
  return template.replace(PLACEHOLDER, (_all, name: string, fallback: string | undefined) => {
    const raw = values[name as TemplateVariable];
    const value = raw != null && raw.trim() !== '' ? raw : (fallback ?? '').trim();
    return mode === 'html' ? escapeHtml(value) : value;
  });
}

/** Subjects are one line: line breaks a value brought in become spaces (no header injection). */
export const oneLine = (value: string): string => value.replace(/[\r\n]+/g, ' ').trim();

/** FNV-1a, 32 bits: a stable hash for deterministic choices (no Node crypto: workflows import this file too). */
export function fnv1a(input: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < input.length; i++) {
    hash ^= input.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The A/B variant an enrollment gets for a step: the same every time it is asked, spread evenly. */
export const chooseVariant = (enrollmentId: string, step: number, count: number): number =>
  count <= 1 ? 0 : fnv1a(`${enrollmentId}:${step}`) % count;
