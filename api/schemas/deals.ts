import { z } from 'zod';
import { DEAL_STAGES } from '../../domain/deals';
import { trimmedText } from '../../domain/trimmed-text';
import { TagNames, Timestamp, Uuid, cappedLimit, dateInput, offsetQuery } from './common';

export const DealStage = z.enum(DEAL_STAGES).openapi('DealStage');

export const DEAL_LIST_DEFAULT = 50;
export const DEAL_LIST_MAX = 200;

const CURRENCIES = Intl.supportedValuesOf('currency');
const KNOWN_CURRENCIES = new Set(CURRENCIES);

/** An ISO 4217 code the runtime knows: exactly the listed ones (the document says which). */
export const Currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an upper-case ISO 4217 code such as USD')
  .refine((code) => KNOWN_CURRENCIES.has(code), 'unknown ISO 4217 currency code')
  .openapi({ enum: CURRENCIES, example: 'USD' });

/** numeric(16, 2): non-negative, stored rounded to cents. */
const Money = z.number().min(0).max(99_999_999_999_999);

const dealFields = {
  name: trimmedText(300),
  stage: DealStage,
  value: Money.nullable(),
  currency: Currency.nullable().openapi({ enum: [...CURRENCIES, null] }),
  owner_id: trimmedText(200).nullable(),
  account_id: Uuid.nullable(),
  contact_id: Uuid.nullable(),
  close_date: dateInput('Expected close date').nullable(),
  tags: TagNames,
};

export const CreateDealBody = z
  .object({
    name: dealFields.name,
    stage: dealFields.stage.default('prospecting'),
    value: dealFields.value.optional(),
    currency: dealFields.currency.optional().describe('defaults to USD'),
    owner_id: dealFields.owner_id.optional(),
    account_id: dealFields.account_id.optional(),
    contact_id: dealFields.contact_id.optional(),
    close_date: dealFields.close_date.optional(),
    tags: dealFields.tags.optional(),
  })
  .strict()
  .openapi('DealCreate');

/** Any subset; an explicit null clears a field (name, stage and tags cannot be null). */
export const UpdateDealBody = z.object(dealFields).partial().strict().openapi('DealUpdate');

export const Deal = z
  .object({
    id: Uuid,
    name: z.string(),
    stage: DealStage,
    value: z.number().nullable(),
    currency: z.string().nullable(),
    owner_id: z.string().nullable(),
    account_id: Uuid.nullable(),
    contact_id: Uuid.nullable(),
    close_date: z.string().nullable(),
    tags: z.array(z.string()),
    closed_at: Timestamp.nullable().describe('set when the deal moves into closed_won or closed_lost; null while open'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('Deal');

export const DealListQuery = z.object({
  stage: DealStage.optional(),
  account_id: Uuid.optional(),
  owner_id: z.string().min(1).max(200).optional(),
  limit: cappedLimit(DEAL_LIST_DEFAULT, DEAL_LIST_MAX),
  offset: offsetQuery(),
});

export const DealParams = z.object({ deal_id: Uuid });
