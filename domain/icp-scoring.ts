// The deterministic ICP scorer: one account's facts against a profile's criteria. Pure: the same
// criteria and facts give the same score. Kept apart from domain/intelligence.ts, which workflow code
// imports, so the country tables stay out of the workflow bundle.
import { normalizeCountry, normalizeIndustry } from './icp-criteria';
import { parseRange, type Criterion, type CriterionType, type Fact, type FactField } from './intelligence';

const round2 = (n: number) => Math.round(n * 100) / 100;

// ---- scoring ----------------------------------------------------------------------------------------

export type CriterionResult = 'matched' | 'missed' | 'unknown';

export interface BreakdownEntry {
  type: CriterionType;
  values: string[];
  weight: number;
  exclude: boolean;
  result: CriterionResult;
  /** The facts the decision rests on, each with its source. */
  evidence: { value: string; source: string; confidence: number }[];
}

export interface FitScore {
  outcome: 'scored' | 'no_score';
  fit_score: number | null;
  grade: 'A' | 'B' | 'C' | 'D' | null;
  breakdown: BreakdownEntry[];
  confidence: number | null;
  excluded: boolean;
}

export const gradeFor = (score: number): 'A' | 'B' | 'C' | 'D' => (score >= 80 ? 'A' : score >= 60 ? 'B' : score >= 40 ? 'C' : 'D');

const norm = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
/** How values of a criterion type compare: countries by ISO code, industries through their synonyms. */
const comparable = (type: CriterionType) => (value: string) =>
  type === 'country'
    ? (normalizeCountry(value) ?? norm(value))
    : type === 'industry'
      ? (normalizeIndustry(value) ?? norm(value))
      : norm(value);

/**
 * Below this share of the scoring weight known, an account has too few facts to score: `no_score`, not a
 * low score that would read as a bad fit.
 */
export const MIN_KNOWN_WEIGHT_SHARE = 0.5;
const evidenceOf = (facts: Fact[]) => facts.map((f) => ({ value: f.value, source: f.source, confidence: f.confidence }));

function judge(criterion: Criterion, facts: Fact[]): { result: CriterionResult; evidence: Fact[] } {
  const of = (...fields: FactField[]) => facts.filter((f) => fields.includes(f.field));
  switch (criterion.type) {
    case 'industry':
    case 'country':
    case 'technology':
    case 'custom': {
      const known = of(criterion.type === 'custom' ? 'tag' : criterion.type);
      if (known.length === 0) return { result: 'unknown', evidence: [] };
      const same = comparable(criterion.type);
      const wanted = new Set(criterion.values.map(same));
      const hits = known.filter((f) => wanted.has(same(f.value)));
      return hits.length ? { result: 'matched', evidence: hits } : { result: 'missed', evidence: known };
    }
    case 'employees':
    case 'revenue': {
      const known = of(criterion.type).filter((f) => Number.isFinite(Number(f.value)));
      if (known.length === 0) return { result: 'unknown', evidence: [] };
      const best = [...known].sort((a, b) => b.confidence - a.confidence)[0]!;
      const n = Number(best.value);
      const inRange = criterion.values.some((v) => {
        const r = parseRange(v);
        return r !== null && n >= r.min && n <= r.max;
      });
      return { result: inRange ? 'matched' : 'missed', evidence: [best] };
    }
    case 'keyword': {
      // Not the account's name: a name containing the keyword says nothing about what the company does.
      const all = of('description', 'industry', 'technology', 'location', 'text');
      if (all.length === 0) return { result: 'unknown', evidence: [] };
      const hits = all.filter((f) => criterion.values.some((k) => f.value.toLowerCase().includes(k.trim().toLowerCase())));
      const evidence = hits.map((f) => ({ ...f, value: f.value.length > 300 ? `${f.value.slice(0, 297)}...` : f.value }));
      return hits.length ? { result: 'matched', evidence: evidence.slice(0, 3) } : { result: 'missed', evidence: [] };
    }
  }
}

/**
 * The deterministic ICP score of one account from its facts (research facts, and the account's own
 * columns with source `crm`; tags as field `tag`, page text as field `text`).
 *
 * fit_score = 100 × (weight of matched criteria) / (weight of all non-exclusion criteria), rounded;
 * an unknown criterion earns nothing. A matched exclusion criterion makes the score 0. confidence =
 * the share of weight whose outcome is known, times the mean confidence of the evidence used. When less
 * than MIN_KNOWN_WEIGHT_SHARE of the scoring weight is known (and no exclusion matched), the outcome is
 * `no_score`: too few facts are not a bad fit.
 */
export function scoreIcpFit(criteria: Criterion[], facts: Fact[]): FitScore {
  const breakdown: BreakdownEntry[] = criteria.map((c) => {
    const { result, evidence } = judge(c, facts);
    return { type: c.type, values: c.values, weight: c.weight, exclude: c.exclude ?? false, result, evidence: evidenceOf(evidence) };
  });
  const scoring = breakdown.filter((b) => !b.exclude);
  const total = scoring.reduce((s, b) => s + b.weight, 0);
  const known = breakdown.filter((b) => b.result !== 'unknown');
  const excluded = breakdown.some((b) => b.exclude && b.result === 'matched');
  const knownWeight = scoring.filter((b) => b.result !== 'unknown').reduce((s, b) => s + b.weight, 0);
  const share = total === 0 ? (known.length > 0 ? 1 : 0) : knownWeight / total;
  if (!excluded && share < MIN_KNOWN_WEIGHT_SHARE)
    return { outcome: 'no_score', fit_score: null, grade: null, breakdown, confidence: null, excluded: false };
  const matched = scoring.filter((b) => b.result === 'matched').reduce((s, b) => s + b.weight, 0);
  const evidence = known.flatMap((b) => b.evidence);
  const meanConfidence = evidence.length ? evidence.reduce((s, e) => s + e.confidence, 0) / evidence.length : 1;
  const score = excluded || total === 0 ? 0 : Math.round((100 * matched) / total);
  return { outcome: 'scored', fit_score: score, grade: gradeFor(score), breakdown, confidence: round2(share * meanConfidence), excluded };
}

/**
 * The facts the scorer sees for an account: research facts, overridden by what the CRM row holds. A
 * column still holding the value research wrote into it (`written`) is research's fact, with its page
 * as source; a value a person entered or changed is a `crm` fact with confidence 1.
 */
export function accountFacts(
  account: { name: string; industry: string | null; employee_count: number | null; description: string | null; tags: string[] },
  research: Fact[],
  written: Record<string, string | number> | null = null,
): Fact[] {
  const crm = (field: FactField, value: string): Fact => ({ field, value, source: 'crm', confidence: 1 });
  const out: Fact[] = [crm('name', account.name)];
  const held = new Set<string>();
  const own = (column: string, field: FactField, value: string | number | null) => {
    if (value === null || value === '') return;
    if (written?.[column] !== undefined && String(written[column]) === String(value)) {
      const found = research.filter((f) => f.field === field && f.value === String(value));
      if (found.length) return (out.push(...found), held.add(field));
    }
    out.push(crm(field, String(value)));
    held.add(field);
  };
  own('industry', 'industry', account.industry);
  own('employee_count', 'employees', account.employee_count);
  own('description', 'description', account.description);
  for (const tag of account.tags) out.push(crm('tag', tag));
  for (const fact of research) if (!held.has(fact.field) && fact.field !== 'name') out.push(fact);
  return out;
}
