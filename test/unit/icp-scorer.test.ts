import { describe, expect, it } from 'vitest';
import { criteriaProblems, normalizeCountry, normalizeIndustry } from '../../domain/icp-criteria';
import { accountFacts, gradeFor, scoreIcpFit } from '../../domain/icp-scoring';
import { extractFacts, mergeFacts, parseRange, type Criterion, type Fact } from '../../domain/intelligence';
import { engagementAxis, readinessLabel, timingAxis } from '../../domain/readiness';
import { extractPageProfile } from '../../platform/adapters/web/fetch';
import { ACME_SOFTWARE, companyPages } from '../support/fake-company-site';

const fact = (field: Fact['field'], value: string, confidence = 0.8, source = 'https://acme.example/'): Fact => ({
  field,
  value,
  source,
  confidence,
});

const CRITERIA: Criterion[] = [
  { type: 'industry', values: ['software'], weight: 40 },
  { type: 'employees', values: ['50-200'], weight: 30 },
  { type: 'country', values: ['Germany', 'France'], weight: 20 },
  { type: 'technology', values: ['HubSpot'], weight: 10 },
];

describe('ICP scorer', () => {
  it('scores matched weight over total weight, with a breakdown naming each result and its evidence', () => {
    const facts = [fact('industry', 'software'), fact('employees', '120'), fact('country', 'Spain'), fact('technology', 'HubSpot', 0.9)];
    const score = scoreIcpFit(CRITERIA, facts);
    expect(score).toMatchObject({ outcome: 'scored', fit_score: 80, grade: 'A', excluded: false });
    expect(score.breakdown.map((b) => b.result)).toEqual(['matched', 'matched', 'missed', 'matched']);
    expect(score.breakdown[0]!.evidence).toEqual([{ value: 'software', source: 'https://acme.example/', confidence: 0.8 }]);
    expect(score.breakdown[2]!.evidence[0]!.value).toBe('Spain');
  });

  it('is deterministic: the same inputs give the same score, breakdown and confidence', () => {
    const facts = [fact('industry', 'software'), fact('employees', '120')];
    expect(scoreIcpFit(CRITERIA, facts)).toEqual(scoreIcpFit(CRITERIA, [...facts]));
  });

  it('counts an unknown criterion as unmatched and lowers the confidence', () => {
    const score = scoreIcpFit(CRITERIA, [fact('industry', 'software', 1), fact('employees', '10', 1)]);
    expect(score.fit_score).toBe(40);
    expect(score.breakdown.map((b) => b.result)).toEqual(['matched', 'missed', 'unknown', 'unknown']);
    expect(score.confidence).toBe(0.7);
  });

  it('gives no_score, not 0, when nothing at all is known', () => {
    expect(scoreIcpFit(CRITERIA, [])).toMatchObject({ outcome: 'no_score', fit_score: null, grade: null, confidence: null });
  });

  it('gives no_score, never a low grade, when less than half of the weight is known', () => {
    const thin = scoreIcpFit(CRITERIA, [fact('industry', 'retail', 1)]);
    expect(thin).toMatchObject({ outcome: 'no_score', fit_score: null, grade: null });
    expect(thin.breakdown.map((b) => b.result)).toEqual(['missed', 'unknown', 'unknown', 'unknown']);
    expect(scoreIcpFit(CRITERIA, [fact('industry', 'retail', 1), fact('employees', '10', 1)])).toMatchObject({
      outcome: 'scored',
      fit_score: 0,
    });
  });

  it('does not read the account name as a fact for keyword criteria', () => {
    const criteria: Criterion[] = [{ type: 'keyword', values: ['robotics'], weight: 1 }];
    const facts = accountFacts({ name: 'Acme Robotics', industry: null, employee_count: null, description: null, tags: [] }, []);
    expect(scoreIcpFit(criteria, facts)).toMatchObject({ outcome: 'no_score', fit_score: null });
  });

  it('matches countries by name or ISO code, and industries through their synonyms', () => {
    const criteria: Criterion[] = [
      { type: 'country', values: ['DE', 'USA'], weight: 1 },
      { type: 'industry', values: ['SaaS'], weight: 1 },
    ];
    expect(scoreIcpFit(criteria, [fact('country', 'Germany'), fact('industry', 'software')])).toMatchObject({ fit_score: 100 });
    expect(scoreIcpFit(criteria, [fact('country', 'United States'), fact('industry', 'Information Technology')])).toMatchObject({
      fit_score: 100,
    });
    expect(scoreIcpFit(criteria, [fact('country', 'France'), fact('industry', 'retail')])).toMatchObject({ fit_score: 0 });
    expect([normalizeCountry('United Kingdom'), normalizeCountry('UK'), normalizeCountry('gbr'), normalizeCountry('Narnia')]).toEqual([
      'GB',
      'GB',
      'GB',
      null,
    ]);
    expect([
      normalizeIndustry('Fin-Tech'),
      normalizeIndustry('fintech'),
      normalizeIndustry('Real Estate'),
      normalizeIndustry('vibes'),
    ]).toEqual([null, 'financial_services', 'real_estate', null]);
  });

  it('names reversed ranges, unknown countries and industries, and all-zero weights as problems', () => {
    const problems = criteriaProblems([
      { type: 'employees', values: ['200-50', '10-20'], weight: 0 },
      { type: 'country', values: ['Germany', 'Atlantis'], weight: 0 },
      { type: 'industry', values: ['vibes'], weight: 0 },
      { type: 'country', values: ['France'], weight: 5, exclude: true },
    ]);
    expect(problems.map((p) => p.path)).toEqual([[0, 'values', 0], [1, 'values', 1], [2, 'values', 0], []]);
    expect(criteriaProblems(CRITERIA)).toEqual([]);
  });

  it('makes a matched exclusion criterion score 0', () => {
    const criteria: Criterion[] = [...CRITERIA, { type: 'country', values: ['Spain'], weight: 0, exclude: true }];
    const score = scoreIcpFit(criteria, [fact('industry', 'software'), fact('country', 'Spain')]);
    expect(score).toMatchObject({ fit_score: 0, grade: 'D', excluded: true });
  });

  it('matches ranges inclusively, open-ended ranges and revenue', () => {
    expect(parseRange('50-200')).toEqual({ min: 50, max: 200 });
    expect(parseRange('1000+')).toEqual({ min: 1000, max: Number.POSITIVE_INFINITY });
    expect(parseRange('200-50')).toBeNull();
    const criteria: Criterion[] = [{ type: 'revenue', values: ['1000000-5000000'], weight: 1 }];
    expect(scoreIcpFit(criteria, [fact('revenue', '5000000')]).fit_score).toBe(100);
    expect(scoreIcpFit([{ type: 'employees', values: ['1000+'], weight: 1 }], [fact('employees', '200')]).fit_score).toBe(0);
  });

  it('matches keywords in descriptions, custom values in tags, case-insensitively', () => {
    const criteria: Criterion[] = [
      { type: 'keyword', values: ['field teams'], weight: 1 },
      { type: 'custom', values: ['Strategic'], weight: 1 },
    ];
    const facts = accountFacts(
      { name: 'Acme', industry: null, employee_count: null, description: 'Software for Field Teams', tags: ['strategic'] },
      [],
    );
    expect(scoreIcpFit(criteria, facts)).toMatchObject({ fit_score: 100 });
  });

  it("lets the CRM row's values win over research facts", () => {
    const facts = accountFacts({ name: 'Acme', industry: 'retail', employee_count: 10, description: null, tags: [] }, [
      fact('industry', 'software'),
      fact('employees', '120'),
    ]);
    expect(facts.filter((f) => f.field === 'industry')).toEqual([{ field: 'industry', value: 'retail', source: 'crm', confidence: 1 }]);
    expect(scoreIcpFit(CRITERIA.slice(0, 2), facts).fit_score).toBe(0);
  });

  it('keeps the research source of a value research wrote into the row, until a person changes it', () => {
    const research = [fact('employees', '120', 0.7, 'https://acme.example/about')];
    const row = { name: 'Acme', industry: null, employee_count: 120, description: null, tags: [] };
    expect(accountFacts(row, research, { employee_count: 120 }).find((f) => f.field === 'employees')!.source).toBe(
      'https://acme.example/about',
    );
    expect(
      accountFacts({ ...row, employee_count: 99 }, research, { employee_count: 120 }).find((f) => f.field === 'employees'),
    ).toMatchObject({ value: '99', source: 'crm' });
  });

  it('grades A ≥ 80, B ≥ 60, C ≥ 40, D below', () => {
    expect([100, 80, 79, 60, 59, 40, 39, 0].map(gradeFor)).toEqual(['A', 'A', 'B', 'B', 'C', 'C', 'D', 'D']);
  });
});

describe('fact extraction', () => {
  const pages = companyPages(ACME_SOFTWARE);
  const factsOf = (path: string) => {
    const html = String(pages[path]!.body);
    const url = `https://acme.example${path}`;
    return extractFacts({ ...extractPageProfile(html, url), html, siteName: /og:site_name" content="([^"]+)"/.exec(html)?.[1] ?? null });
  };

  it('finds name, description, industry and technologies on the home page, each with its URL', () => {
    const facts = factsOf('/');
    const get = (field: string) => facts.filter((f) => f.field === field).map((f) => f.value);
    expect(get('name')).toEqual(['Acme Cloud']);
    expect(get('industry')).toEqual(['software']);
    expect(get('technology').sort()).toEqual(['HubSpot', 'Stripe']);
    expect(facts.every((f) => f.source === 'https://acme.example/' && f.confidence > 0 && f.confidence <= 1)).toBe(true);
  });

  it('finds size, location, country and contact channels on the other pages', () => {
    const facts = mergeFacts([factsOf('/about'), factsOf('/contact')]);
    const get = (field: string) => facts.filter((f) => f.field === field).map((f) => f.value);
    expect(get('employees')).toEqual(['120']);
    expect(get('country')).toEqual(['Germany']);
    expect(get('location')[0]).toContain('Berlin');
    expect(get('email')).toEqual(['hello@acme-cloud.example']);
    expect(get('phone')).toContain('+49 30 1234 5678');
  });

  it('finds nothing on an empty page', () => {
    const html = '<html><body></body></html>';
    expect(extractFacts({ ...extractPageProfile(html, 'https://x.example/about'), html })).toEqual([]);
  });
});

describe('readiness axes and label', () => {
  const now = new Date('2026-01-31T00:00:00Z');
  const ago = (d: number) => new Date(now.getTime() - d * 86_400_000);

  it('scores engagement from recency, frequency, replies, meetings and connected calls', () => {
    const axis = engagementAxis({
      now,
      lastActivityAt: ago(2),
      activities30d: 3,
      emailReplies90d: 1,
      meetings90d: 1,
      connectedCalls90d: 0,
      unansweredCalls90d: 2,
    });
    expect(axis.score).toBe(40 + 15 + 8 + 10);
    expect(axis.signals.find((s) => s.name === 'unanswered_calls_90d')).toMatchObject({ value: 2, points: 0 });
  });

  it('scores timing from the furthest open stage, deal movement, tasks and research', () => {
    const axis = timingAxis({
      now,
      openDealStages: ['prospecting', 'proposal'],
      lastDealChangeAt: ago(20),
      openTasks: 1,
      openTasksDueSoon: 1,
      lastResearchAt: ago(40),
    });
    expect(axis.score).toBe(28 + 12 + 20 + 0);
    expect(axis.signals[0]).toMatchObject({ name: 'furthest_open_stage', value: 'proposal' });
  });

  it('labels by the documented rule', () => {
    expect(readinessLabel(null, 100, 100)).toBe('unknown_fit');
    expect(readinessLabel(39, 100, 100)).toBe('not_a_fit');
    expect(readinessLabel(60, 50, 40)).toBe('hot');
    expect(readinessLabel(60, 30, 0)).toBe('warm');
    expect(readinessLabel(60, 0, 30)).toBe('warm');
    expect(readinessLabel(59, 100, 100)).toBe('nurture');
    expect(readinessLabel(80, 10, 10)).toBe('nurture');
  });
});
