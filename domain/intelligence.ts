// Customer intelligence rules: run statuses, the facts research extracts from a company's pages, and
// the deterministic ICP scorer. Pure functions: same inputs, same facts, same score.

export const RUN_STATUSES = ['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const FINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'incomplete'];
export const isFinalRunStatus = (s: RunStatus) => FINAL_RUN_STATUSES.includes(s);

/** The pages a research run reads, relative to the site's root; the home page must answer. */
export const RESEARCH_PAGES = ['/', '/about', '/company', '/contact', '/careers'] as const;

/** How many accounts one scoring activity handles: four activities for a batch of 100. */
export const ICP_FIT_CHUNK = 25;
export const ICP_FIT_MAX_ACCOUNTS = 100;

// ---- criteria ---------------------------------------------------------------------------------------

export const CRITERION_TYPES = ['industry', 'employees', 'country', 'technology', 'keyword', 'revenue', 'custom'] as const;
export type CriterionType = (typeof CRITERION_TYPES)[number];
export const RANGE_TYPES = ['employees', 'revenue'] as const;
/** `"50-200"` (both ends included) or `"1000+"`. */
export const RANGE_PATTERN = /^\d{1,13}(-\d{1,13}|\+)$/;

export interface Criterion {
  type: CriterionType;
  values: string[];
  weight: number;
  exclude?: boolean;
}

export function parseRange(value: string): { min: number; max: number } | null {
  const m = /^(\d+)(?:-(\d+)|(\+))$/.exec(value.trim());
  if (!m) return null;
  const min = Number(m[1]);
  const max = m[3] ? Number.POSITIVE_INFINITY : Number(m[2]);
  return max >= min ? { min, max } : null;
}

// ---- facts ------------------------------------------------------------------------------------------

/** `text` is a page's title and headings (for keyword criteria); `tag` only comes from the CRM row. */
export const FACT_FIELDS = [
  'name',
  'description',
  'industry',
  'employees',
  'revenue',
  'location',
  'country',
  'technology',
  'email',
  'phone',
  'social',
  'text',
  'tag',
] as const;
export type FactField = (typeof FACT_FIELDS)[number];

export interface Fact {
  field: FactField;
  value: string;
  /** Where the value was read: a page URL, or `crm` for a value the account itself holds. */
  source: string;
  /** 0..1: how sure the extraction is. */
  confidence: number;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

const INDUSTRY_WORDS: [string, RegExp][] = [
  ['software', /\b(saas|software|cloud platform|api|developer tools?|open[- ]source)\b/gi],
  ['healthcare', /\b(clinic|hospital|healthcare|patients?|medical|dental)\b/gi],
  ['financial_services', /\b(bank(ing)?|fintech|payments?|lending|wealth management|investment)\b/gi],
  ['construction', /\b(construction|plumb(ing|ers?)|roofing|contractors?|builders?)\b/gi],
  ['manufacturing', /\b(manufactur(ing|er)|factory|industrial|machining)\b/gi],
  ['retail', /\b(retail|e-?commerce|online store|shop now)\b/gi],
  ['logistics', /\b(logistics|freight|shipping|warehous(e|ing)|supply chain)\b/gi],
  ['education', /\b(school|university|education|courses|e-?learning)\b/gi],
  ['real_estate', /\b(real estate|property management|realtors?)\b/gi],
  ['legal', /\b(law firm|attorneys?|lawyers?|legal services)\b/gi],
  ['hospitality', /\b(hotel|restaurant|hospitality|catering)\b/gi],
  ['consulting', /\b(consult(ing|ancy|ants?)|advisory)\b/gi],
  ['insurance', /\b(insurance|insurer|underwriting)\b/gi],
  ['telecommunications', /\b(telecom(munications)?|mobile network|broadband)\b/gi],
  ['media', /\b(media|publishing|broadcast(ing)?|newsroom)\b/gi],
  ['energy', /\b(energy|solar|utilities|renewables?)\b/gi],
];

const TECH_SIGNATURES: [string, RegExp][] = [
  ['WordPress', /wp-content|wp-includes|<meta[^>]+generator[^>]+wordpress/i],
  ['Shopify', /cdn\.shopify\.com|myshopify\.com/i],
  ['HubSpot', /js\.hs-scripts\.com|js\.hsforms\.net|hubspot/i],
  ['Google Analytics', /googletagmanager\.com|google-analytics\.com|gtag\(/i],
  ['Next.js', /\/_next\/static|__NEXT_DATA__/],
  ['React', /data-reactroot|react(\.production)?(\.min)?\.js/i],
  ['Stripe', /js\.stripe\.com/i],
  ['Intercom', /widget\.intercom\.io|intercomSettings/i],
  ['Segment', /cdn\.segment\.com/i],
  ['Salesforce', /salesforce\.com|pardot/i],
  ['Zendesk', /zdassets\.com|zendesk/i],
  ['Webflow', /webflow\.(com|io)/i],
];

const COUNTRIES = [
  'United States',
  'USA',
  'Canada',
  'Mexico',
  'Brazil',
  'United Kingdom',
  'UK',
  'Ireland',
  'France',
  'Germany',
  'Spain',
  'Italy',
  'Portugal',
  'Netherlands',
  'Belgium',
  'Switzerland',
  'Austria',
  'Sweden',
  'Norway',
  'Denmark',
  'Finland',
  'Poland',
  'India',
  'China',
  'Japan',
  'Singapore',
  'Australia',
  'New Zealand',
  'South Africa',
  'Israel',
];
const COUNTRY_ALIASES: Record<string, string> = { USA: 'United States', UK: 'United Kingdom' };

/** What one fetched page shows (title, description, headings, text) plus its raw HTML for technologies. */
export interface PageInput {
  url: string;
  title: string | null;
  description: string | null;
  headings: string[];
  text: string;
  html: string;
  siteName?: string | null;
}

const push = (facts: Fact[], fact: Fact) => {
  if (!facts.some((f) => f.field === fact.field && f.value.toLowerCase() === fact.value.toLowerCase())) facts.push(fact);
};

/** Facts one page states, each with its URL and a confidence; rule-based, so the same page gives the same facts. */
export function extractFacts(page: PageInput): Fact[] {
  const facts: Fact[] = [];
  const source = page.url;
  const isHome = new URL(page.url).pathname.replace(/\/+$/, '') === '';
  const corpus = [page.title ?? '', page.description ?? '', ...page.headings, page.text].join('\n');

  const name = page.siteName ?? page.title?.split(/\s[|–—-]\s/)[0]?.trim();
  if (name && isHome) push(facts, { field: 'name', value: name.slice(0, 300), source, confidence: page.siteName ? 0.9 : 0.7 });
  if (page.description && isHome) push(facts, { field: 'description', value: page.description.slice(0, 2000), source, confidence: 0.8 });

  let best: { industry: string; hits: number } | null = null;
  for (const [industry, pattern] of INDUSTRY_WORDS) {
    const hits = corpus.match(pattern)?.length ?? 0;
    if (hits > 0 && (!best || hits > best.hits)) best = { industry, hits };
  }
  if (best) push(facts, { field: 'industry', value: best.industry, source, confidence: round2(Math.min(0.9, 0.4 + 0.1 * best.hits)) });

  const size = /\b(?:team of|over|more than)?\s*(\d{1,3}(?:,\d{3})*|\d+)\+?\s+(?:employees|people|team members|staff|engineers)\b/i.exec(
    corpus,
  );
  if (size) push(facts, { field: 'employees', value: size[1]!.replace(/,/g, ''), source, confidence: 0.7 });

  const revenue = /\$\s?(\d+(?:\.\d+)?)\s?(million|billion|m|bn|b)\b\s+(?:in\s+)?(?:annual\s+)?(?:revenue|arr|sales)/i.exec(corpus);
  if (revenue) {
    const unit = /^b/i.test(revenue[2]!) ? 1e9 : 1e6;
    push(facts, { field: 'revenue', value: String(Math.round(Number(revenue[1]) * unit)), source, confidence: 0.6 });
  }

  const hq = /\b(?:headquartered|based|located|offices?) in ([A-Z][\w .'-]+?(?:, [A-Z][\w .'-]+)*)(?:[.;\n]| and\b)/.exec(corpus);
  if (hq) push(facts, { field: 'location', value: hq[1]!.trim().slice(0, 200), source, confidence: 0.7 });
  for (const country of COUNTRIES) {
    if (new RegExp(`\\b${country.replace('.', '\\.')}\\b`).test(corpus)) {
      push(facts, { field: 'country', value: COUNTRY_ALIASES[country] ?? country, source, confidence: 0.6 });
    }
  }

  const outline = [page.title, ...page.headings].filter(Boolean).join(' · ').slice(0, 500);
  if (outline) push(facts, { field: 'text', value: outline, source, confidence: 0.6 });

  for (const [tech, pattern] of TECH_SIGNATURES)
    if (pattern.test(page.html)) push(facts, { field: 'technology', value: tech, source, confidence: 0.9 });

  for (const m of page.html.matchAll(/mailto:([^"'?>\s]+@[^"'?>\s]+)/gi))
    push(facts, { field: 'email', value: m[1]!.toLowerCase(), source, confidence: 0.95 });
  for (const m of corpus.matchAll(/\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g))
    push(facts, { field: 'email', value: m[0].toLowerCase(), source, confidence: 0.8 });
  for (const m of page.html.matchAll(/href=["']tel:([+\d][\d\s().-]{5,})["']/gi))
    push(facts, { field: 'phone', value: m[1]!.trim(), source, confidence: 0.95 });
  for (const m of corpus.matchAll(/\+\d[\d ().-]{7,}\d/g)) push(facts, { field: 'phone', value: m[0].trim(), source, confidence: 0.7 });
  for (const m of page.html.matchAll(/https?:\/\/(?:www\.)?(?:linkedin\.com\/company|twitter\.com|x\.com|facebook\.com)\/[\w.-]+/gi)) {
    push(facts, { field: 'social', value: m[0], source, confidence: 0.9 });
  }
  return facts;
}

/** Facts of several pages in one list: a value found on several pages keeps its most confident source. */
export function mergeFacts(lists: Fact[][]): Fact[] {
  const merged: Fact[] = [];
  for (const fact of lists.flat()) {
    const i = merged.findIndex((f) => f.field === fact.field && f.value.toLowerCase() === fact.value.toLowerCase());
    if (i < 0) merged.push(fact);
    else if (fact.confidence > merged[i]!.confidence) merged[i] = fact;
  }
  return merged;
}

/** The account columns research may fill, from the facts (the most confident value of each). */
export function accountFieldsFromFacts(
  facts: Fact[],
): Partial<Record<'name' | 'description' | 'industry' | 'employee_count', string | number>> {
  const top = (field: FactField) => facts.filter((f) => f.field === field).sort((a, b) => b.confidence - a.confidence)[0];
  const out: Partial<Record<'name' | 'description' | 'industry' | 'employee_count', string | number>> = {};
  const description = top('description');
  if (description) out.description = description.value;
  const industry = top('industry');
  if (industry) out.industry = industry.value;
  const employees = top('employees');
  if (employees && Number.isSafeInteger(Number(employees.value))) out.employee_count = Number(employees.value);
  return out;
}
