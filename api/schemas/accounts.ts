import { z } from 'zod';
import { ACCOUNT_INDUSTRIES } from '../../domain/accounts';
import { trimmedText } from '../../domain/trimmed-text';
import { TagNames, Timestamp, Uuid, cappedLimit, offsetQuery } from './common';

/** Industries an account can be filed under; snake_case, stable, with `other` as the catch-all. */
export const AccountIndustry = z.enum(ACCOUNT_INDUSTRIES).openapi('AccountIndustry');

export const ACCOUNT_LIST_DEFAULT = 200;
export const ACCOUNT_LIST_MAX = 500;

/** A bare host name (lower-cased), e.g. acme.com; no scheme, path or port. */
const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$/, 'must be a domain name such as example.com');

export const HttpUrl = z.url({ protocol: /^https?$/ }).max(2048);

const accountFields = {
  name: trimmedText(300),
  domain: Domain.nullable(),
  industry: AccountIndustry.nullable(),
  website: HttpUrl.nullable(),
  description: z.string().max(10_000).nullable(),
  owner_id: trimmedText(200).nullable(),
  employee_count: z.number().int().min(0).max(100_000_000).nullable(),
  tags: TagNames,
};

export const CreateAccountBody = z
  .object({
    ...accountFields,
    domain: accountFields.domain.optional(),
    industry: accountFields.industry.optional(),
    website: accountFields.website.optional(),
    description: accountFields.description.optional(),
    owner_id: accountFields.owner_id.optional(),
    employee_count: accountFields.employee_count.optional(),
    tags: accountFields.tags.optional(),
  })
  .strict()
  .openapi('AccountCreate');

/** Any subset; an explicit null clears a field (name and tags cannot be null). */
export const UpdateAccountBody = z.object(accountFields).partial().strict().openapi('AccountUpdate');

export const AccountListItem = z
  .object({
    id: Uuid,
    name: z.string(),
    industry: AccountIndustry.nullable(),
    health_score: z.number().int().min(0).max(100).nullable(),
    domain: z.string().nullable(),
  })
  .openapi('AccountListItem');

export const Account = z
  .object({
    id: Uuid,
    name: z.string(),
    domain: z.string().nullable(),
    industry: AccountIndustry.nullable(),
    website: z.string().nullable(),
    description: z.string().nullable(),
    owner_id: z.string().nullable(),
    employee_count: z.number().int().nullable(),
    health_score: z.number().int().min(0).max(100).nullable(),
    tags: z.array(z.string()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Account');

export const AccountListQuery = z.object({
  limit: cappedLimit(ACCOUNT_LIST_DEFAULT, ACCOUNT_LIST_MAX),
  offset: offsetQuery(),
  search: z
    .string()
    .max(200)
    .optional()
    .openapi({ description: 'Case-insensitive substring of name or domain; parentheses are removed and each comma becomes a space' }),
});

export const AccountParams = z.object({ account_id: Uuid });

export const HealthFactors = z
  .object({
    recency: z.number().describe('points for the latest past activity, 0-40'),
    deals: z.number().describe('points for open deals, 0-30'),
    engagement: z.number().describe('points for contacts engaged in the last 90 days, 0-30'),
    days_since_last_activity: z.number().nullable(),
    open_deals: z.number().int(),
    contacts: z.number().int(),
    engaged_contacts: z.number().int(),
  })
  .openapi('AccountHealthFactors');

export const HealthEntry = z
  .object({ id: Uuid, score: z.number().int().min(0).max(100), factors: HealthFactors, computed_at: Timestamp })
  .openapi('AccountHealthScore');

export const AccountHealth = z
  .object({
    account_id: Uuid,
    health_score: z.number().int().min(0).max(100).nullable().describe('the latest score; null if never computed'),
    computed_at: Timestamp.nullable(),
    history: z.array(HealthEntry).describe('newest first'),
  })
  .openapi('AccountHealth');

export const HealthQuery = z.object({
  limit: cappedLimit(50, 200, 'History entries, default 50; above 200 served as 200'),
});

export const WorkflowStarted = z.object({ workflow_id: z.string() }).openapi('WorkflowStarted');
