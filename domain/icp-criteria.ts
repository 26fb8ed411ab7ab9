// ICP criteria values as the scorer compares them: countries as ISO 3166-1 alpha-2 codes (a name, an
// alpha-2 or an alpha-3 code all name the same country), industries as the account industries with
// their documented synonyms. A value that names nothing known is refused when the profile is saved.
import countries from 'i18n-iso-countries';
import en from 'i18n-iso-countries/langs/en.json';
import { ACCOUNT_INDUSTRIES, type AccountIndustry } from './accounts';
import { parseRange } from './intelligence';

countries.registerLocale(en);

/** The alpha-2 code of a country name ("Germany", "United States of America", "UK") or code ("DE", "DEU"). */
export function normalizeCountry(value: string): string | null {
  const v = value.trim();
  if (/^[a-z]{2}$/i.test(v)) return countries.isValid(v.toUpperCase()) ? v.toUpperCase() : v.toUpperCase() === 'UK' ? 'GB' : null;
  if (/^[a-z]{3}$/i.test(v)) return countries.alpha3ToAlpha2(v.toUpperCase()) ?? countries.getAlpha2Code(v, 'en') ?? null;
  return countries.getAlpha2Code(v, 'en') ?? null;
}

/**
 * Other words for the account industries, matched after lower-casing and turning spaces and hyphens into
 * underscores. Documented in the OpenAPI description of industry criteria.
 */
export const INDUSTRY_SYNONYMS: Record<string, AccountIndustry> = {
  saas: 'software',
  tech: 'software',
  technology: 'software',
  it: 'software',
  information_technology: 'software',
  fintech: 'financial_services',
  finance: 'financial_services',
  financial: 'financial_services',
  banking: 'financial_services',
  health: 'healthcare',
  health_care: 'healthcare',
  medical: 'healthcare',
  pharma: 'pharmaceuticals',
  biotech: 'pharmaceuticals',
  telecom: 'telecommunications',
  telco: 'telecommunications',
  ecommerce: 'retail',
  e_commerce: 'retail',
  transport: 'logistics',
  transportation: 'logistics',
  shipping: 'logistics',
  nonprofit: 'non_profit',
  ngo: 'non_profit',
  charity: 'non_profit',
  public_sector: 'government',
  property: 'real_estate',
  realestate: 'real_estate',
  law: 'legal',
  travel: 'hospitality',
  food_and_beverage: 'hospitality',
  publishing: 'media',
  entertainment: 'media',
  utilities: 'energy',
  cpg: 'consumer_goods',
  fmcg: 'consumer_goods',
  farming: 'agriculture',
  auto: 'automotive',
  industrial: 'manufacturing',
};

const INDUSTRIES = new Set<string>(ACCOUNT_INDUSTRIES);
const key = (s: string) =>
  s
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');

/** The account industry a value names, itself or through a synonym; null when it names none. */
export function normalizeIndustry(value: string): AccountIndustry | null {
  const k = key(value);
  if (INDUSTRIES.has(k)) return k as AccountIndustry;
  return INDUSTRY_SYNONYMS[k] ?? null;
}

export interface CriterionProblem {
  /** Path inside the criteria array: [index, 'values', j] or [index, 'weight']. */
  path: (string | number)[];
  message: string;
}

interface CriterionInput {
  type: string;
  values: string[];
  weight: number;
  exclude?: boolean;
}

/**
 * Rules a JSON Schema cannot state: ranges run low to high, countries and industries name something
 * known, and the scoring criteria (those that are not exclusions) do not all weigh zero.
 */
export function criteriaProblems(criteria: CriterionInput[]): CriterionProblem[] {
  const problems: CriterionProblem[] = [];
  criteria.forEach((c, i) => {
    c.values.forEach((v, j) => {
      if ((c.type === 'employees' || c.type === 'revenue') && parseRange(v) === null) {
        problems.push({ path: [i, 'values', j], message: `range "${v}" runs from high to low: write it "min-max" with min ≤ max` });
      }
      if (c.type === 'country' && normalizeCountry(v) === null) {
        problems.push({ path: [i, 'values', j], message: `"${v}" is not a country name or ISO 3166-1 code` });
      }
      if (c.type === 'industry' && normalizeIndustry(v) === null) {
        problems.push({
          path: [i, 'values', j],
          message: `"${v}" is not a known industry (one of the account industries or a documented synonym)`,
        });
      }
    });
  });
  const scoring = criteria.filter((c) => !c.exclude);
  if (scoring.length > 0 && scoring.every((c) => c.weight === 0)) {
    problems.push({ path: [], message: 'every scoring criterion weighs 0: give at least one a weight above 0' });
  }
  return problems;
}
