import { z } from 'zod';
import { INDUSTRY_SYNONYMS, criteriaProblems } from '../../domain/icp-criteria';
import { CRITERION_TYPES, FACT_FIELDS, ICP_FIT_MAX_ACCOUNTS, RANGE_PATTERN, RUN_STATUSES } from '../../domain/intelligence';
import { exactlyOneOf, refusing } from '../../domain/schema-rules';
import { Timestamp, Uuid, offsetQuery } from './common';

/** Postgres text and jsonb cannot hold NUL characters: refused here (422) and said so in the document. */
const NO_NUL = /^[^\u0000]*$/;
/** Some character other than what String.prototype.trim removes, so a value never trims to empty; no NUL. */
const NOT_BLANK = /^[^\u0000]*[^\u0000\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff][^\u0000]*$/;
const Text = (max: number) => z.string().regex(NOT_BLANK, 'must contain a visible character and no NUL').trim().min(1).max(max);
const Value = Text(200);
const Weight = z.number().min(0).max(100).describe('relative weight of the criterion (0-100)');
const Exclude = z.boolean().optional().describe('a match disqualifies the account (fit_score 0) instead of adding weight');

const TextCriterion = z.strictObject({
  type: z.enum(
    CRITERION_TYPES.filter((t) => t !== 'employees' && t !== 'revenue') as ['industry', 'country', 'technology', 'keyword', 'custom'],
  ),
  values: z.array(Value).min(1).max(50),
  weight: Weight,
  exclude: Exclude,
});
const RangeCriterion = z.strictObject({
  type: z.enum(['employees', 'revenue']),
  values: z
    .array(z.string().regex(RANGE_PATTERN, 'must be a range like "50-200" or "1000+"'))
    .min(1)
    .max(50)
    .describe('ranges "min-max" (both included) or "min+"; revenue in US dollars'),
  weight: Weight,
  exclude: Exclude,
});
export const Criterion = z.union([TextCriterion, RangeCriterion]).openapi('IcpCriterion');

const ProfileName = Text(200);
const Description = z.string().max(2000).regex(NO_NUL, 'must not contain NUL characters').nullable();
const Criteria = z
  .array(Criterion)
  .min(1)
  .max(50)
  .superRefine((criteria, ctx) => {
    for (const problem of criteriaProblems(criteria)) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
  })
  // The weight rule as the document states it: every criterion is an exclusion, or one that is not weighs more than 0.
  // Refused are the lists with a criterion that is not an exclusion and none that is not and weighs more than 0.
  .meta(
    refusing({
      contains: { not: { required: ['exclude'], properties: { exclude: { const: true } } } },
      not: { contains: { required: ['weight'], properties: { weight: { exclusiveMinimum: 0 }, exclude: { const: false } } } },
    }),
  )
  .describe(
    'Rules beyond the schema (422 naming the value): ranges run from low to high; country values are country names or ISO 3166-1 ' +
      'alpha-2/alpha-3 codes, compared by code; industry values are account industries (AccountIndustry) or one of the synonyms ' +
      `${Object.keys(INDUSTRY_SYNONYMS).join(', ')}; at least one criterion that is not an exclusion weighs more than 0 (the not keyword). ` +
      'An account whose known facts cover less than half of the scoring weight gets outcome no_score, not a low score; ' +
      "the account's name is never a fact for keyword criteria.",
  );

export const CreateProfileBody = z
  .strictObject({ name: ProfileName, description: Description.optional(), criteria: Criteria, is_default: z.boolean().optional() })
  .openapi('IcpProfileCreate');

export const PatchProfileBody = z
  .strictObject({ name: ProfileName, description: Description, criteria: Criteria, is_default: z.literal(true) })
  .partial()
  .openapi('IcpProfilePatch', { minProperties: 1 });

export const IcpProfile = z
  .object({
    id: Uuid,
    name: z.string(),
    description: z.string().nullable(),
    version: z.number().int().describe('grows by one on every criteria change'),
    criteria: z.array(Criterion),
    is_default: z.boolean().describe("the organization's default profile scores the fit axis of readiness profiles"),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('IcpProfile');

export const IcpProfileList = z
  .object({ profiles: z.array(IcpProfile), limit: z.number().int(), offset: z.number().int() })
  .openapi('IcpProfileList');
export const IcpProfileVersions = z
  .object({
    versions: z.array(z.object({ profile_id: Uuid, version: z.number().int(), criteria: z.array(Criterion), created_at: Timestamp })),
  })
  .openapi('IcpProfileVersions');

export const ProfileParams = z.object({ profile_id: Uuid });
export const RunParams = z.object({ run_id: Uuid });
export const WorkflowParams = z.object({ workflow_id: z.string().max(200) });

export const Page = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: offsetQuery(1_000_000),
});

const Status = z.enum(RUN_STATUSES);

export const RunStarted = z.object({ id: Uuid, workflow_id: z.string(), status: Status }).openapi('IntelligenceRunStarted');

// ---- research ---------------------------------------------------------------------------------------

const Hostname = z
  .string()
  .max(253)
  .regex(/^(?=.{1,253}$)([a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,63}$/, 'must be a domain name like example.com');

const RESEARCH_TARGETS = ['account_id', 'domain', 'website'] as const;
export const CreateResearchRunBody = z
  .strictObject({
    account_id: Uuid.optional().describe("research the account's website (or domain); its fields are filled"),
    domain: Hostname.optional().describe('research https://<domain>'),
    website: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .optional()
      .describe('research this site (its origin)'),
  })
  .refine((b) => RESEARCH_TARGETS.filter((field) => b[field] !== undefined).length === 1, {
    message: 'Send exactly one of account_id, domain or website',
  })
  .openapi('ResearchRunCreate', {
    description: 'Exactly one of account_id, domain or website (else 422)',
    ...exactlyOneOf(RESEARCH_TARGETS),
  });

export const ResearchRunQuery = Page.extend({ account_id: Uuid.optional(), status: Status.optional() });

const Fact = z
  .object({ field: z.enum(FACT_FIELDS), value: z.string(), source: z.string(), confidence: z.number() })
  .openapi('ResearchFact');

export const ResearchRun = z
  .object({
    id: Uuid,
    kind: z.literal('research'),
    workflow_id: z.string(),
    status: Status,
    account_id: Uuid.nullable(),
    domain: z.string().describe("the site's root URL"),
    progress: z.object({ pages_total: z.number().int(), pages_done: z.number().int(), pages_failed: z.number().int() }),
    pages: z.array(z.object({ url: z.string(), status: z.enum(['fetched', 'missing', 'failed']), error: z.string().optional() })),
    results: z.object({
      facts: z.array(Fact).describe('each fact with its source URL (or crm) and a confidence; partial while running'),
      summary: z.string().nullable(),
      summary_source: z.enum(['llm', 'builtin']).nullable(),
    }),
    applied_fields: z.array(z.string()).describe('account fields this run wrote'),
    kept_fields: z.array(z.string()).describe('account fields a person edited, left as they were'),
    credits_used: z.number().int().describe('1 for a run that found facts; 0 for one that found nothing, failed or was cancelled'),
    error: z.string().nullable(),
    created_at: Timestamp,
    started_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
  })
  .openapi('ResearchRun');

export const ResearchRunList = z
  .object({ runs: z.array(ResearchRun), limit: z.number().int(), offset: z.number().int() })
  .openapi('ResearchRunList');
export const CancelAccepted = z
  .object({ id: Uuid, workflow_id: z.string(), status: z.literal('cancelling') })
  .openapi('ResearchRunCancelling');

// ---- ICP fit ----------------------------------------------------------------------------------------

export const CreateIcpFitRunBody = z
  .strictObject({
    profile_id: Uuid,
    account_ids: z.array(Uuid).min(1).max(ICP_FIT_MAX_ACCOUNTS).describe('results come back in this order'),
  })
  .openapi('IcpFitRunCreate');

export const IcpFitRunQuery = Page.extend({ profile_id: Uuid.optional() });

const Evidence = z.object({ value: z.string(), source: z.string(), confidence: z.number() });
export const BreakdownEntry = z
  .object({
    type: z.enum(CRITERION_TYPES),
    values: z.array(z.string()),
    weight: z.number(),
    exclude: z.boolean(),
    result: z.enum(['matched', 'missed', 'unknown']),
    evidence: z.array(Evidence),
  })
  .openapi('IcpBreakdownEntry');

const IcpFitRunFields = {
  id: Uuid,
  kind: z.literal('icp_fit'),
  workflow_id: z.string(),
  status: Status,
  profile_id: Uuid.nullable(),
  profile_version: z.number().int().describe('the profile version every score of the run used'),
  account_count: z.number().int(),
  progress: z.object({ accounts_total: z.number().int(), accounts_done: z.number().int() }),
  error: z.string().nullable(),
  created_at: Timestamp,
  completed_at: Timestamp.nullable(),
};

export const IcpFitResult = z
  .object({
    account_id: Uuid,
    outcome: z.enum(['pending', 'scored', 'not_found', 'no_score']),
    fit_score: z.number().int().min(0).max(100).nullable(),
    grade: z.enum(['A', 'B', 'C', 'D']).nullable(),
    breakdown: z.array(BreakdownEntry),
    confidence: z.number().min(0).max(1).nullable(),
  })
  .openapi('IcpFitResult');

export const IcpFitRunSummary = z.object(IcpFitRunFields).openapi('IcpFitRunSummary');
export const IcpFitRun = z
  .object({ ...IcpFitRunFields, results: z.array(IcpFitResult).describe('in the order of account_ids') })
  .openapi('IcpFitRun');
export const IcpFitRunList = z
  .object({ runs: z.array(IcpFitRunSummary), limit: z.number().int(), offset: z.number().int() })
  .openapi('IcpFitRunList');

export const RunByWorkflow = z
  .object({ id: Uuid, kind: z.enum(['research', 'icp_fit']), workflow_id: z.string(), status: Status })
  .openapi('IntelligenceRunRef');
