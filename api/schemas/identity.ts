import { z } from 'zod';
import { secretField } from '../secret-fields';
import { TimestampInput } from './common';

export const CreateKeyBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    scopes: z
      .array(z.string().regex(/^[a-z_]+:[a-z_]+$/, 'must look like area:action'))
      .min(1)
      .max(50)
      .optional(),
    expires_at: TimestampInput.optional().nullable(),
  })
  .strict()
  .openapi('CreateKeyRequest');

export const KeyView = z
  .object({
    id: z.uuid(),
    name: z.string(),
    kind: z.enum(['organization', 'user']),
    key_id: z.string(),
    organization_id: z.uuid().nullable(),
    scopes: z.array(z.string()),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
    created_at: z.string(),
    created_by: z.string(),
  })
  .openapi('ApiKey');

export const CreatedOrganizationKey = KeyView.extend({ pat_key: z.string() }).openapi('CreatedOrganizationKey');
export const CreatedUserToken = KeyView.extend({ token: z.string() }).openapi('CreatedUserToken');

/** The unauthenticated exchange takes one token: a small body limit of its own. */
export const EXCHANGE_BODY_LIMIT_BYTES = 16 * 1024;

export const ExchangeBody = z
  .object({ token: secretField(z.string().min(1), 'An ak_ key or a pat_ token (a 422 never echoes it)') })
  .openapi('ExchangeRequest');
export const ExchangeResult = z
  .object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number().int() })
  .openapi('ExchangeResult');

export const Me = z
  .object({
    user: z.object({ id: z.uuid(), external_id: z.string() }),
    organization: z.object({ id: z.uuid(), external_id: z.string() }).nullable(),
    token_kind: z.enum(['session', 'organization_key', 'user_token']),
    scopes: z.array(z.string()),
  })
  .openapi('Me');

export const Jwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).openapi('Jwks');
