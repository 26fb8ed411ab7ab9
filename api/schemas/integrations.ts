import { z } from 'zod';
import { CreatedCursor, cursorQuery } from '../pagination';
import { CONNECTION_STATUSES } from '../../domain/integrations';
import { Timestamp, Uuid, cappedLimit } from './common';
import { phoneNumberField } from './phone-numbers';

const IntegrationKey = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be an integration key');
const RedirectUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .openapi({ description: 'Absolute http(s) URL on an allowed origin (GET /integrations/settings)' });

export const Integration = z
  .object({
    key: z.string(),
    name: z.string(),
    description: z.string(),
    simulated: z.boolean().openapi({ description: 'The built-in loopback provider of the embedded defaults; grants nothing real' }),
    scopes: z
      .array(z.object({ name: z.string(), description: z.string() }))
      .openapi({ description: 'Every scope the integration may ask for, and what it grants' }),
    default_scopes: z.array(z.string()).openapi({ description: 'Scopes a connection asks for' }),
    client_source: z.enum(['config', 'organization']).openapi({
      description:
        "config: the deployment's OAuth client; organization: the organization's, from the workflow credential integration-client:<key>",
    }),
    supports_revocation: z.boolean(),
  })
  .openapi('Integration');
export const IntegrationList = z.object({ data: z.array(Integration) }).openapi('IntegrationList');

export const CreateConnectTokenBody = z
  .strictObject({
    allowed_integrations: z.array(IntegrationKey).min(1).max(50),
    end_user_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: 'Your own id of the person connecting, kept on the connection' }),
    connection_id: Uuid.optional().openapi({ description: 'Reconnect this connection (same id) instead of adding one' }),
    success_url: RedirectUrl,
    error_url: RedirectUrl,
  })
  .openapi('CreateConnectToken');

export const ConnectToken = z
  .object({
    token: z.string().openapi({ description: 'Single use; carries no third-party credential' }),
    expires_at: Timestamp,
    connect_url: z.string().openapi({ description: 'Unauthenticated page (the token is the credential) that starts the consent' }),
  })
  .openapi('ConnectToken');

export const ConnectionParams = z.object({ connection_id: Uuid });
export const ConnectPageParams = z.object({ token: z.string().max(200) });
export const AuthorizeQuery = z.object({ integration: z.string().max(100) });
/** The provider's redirect: any parameters it adds (iss, session_state, ...) are read as they come. */
export const CallbackQuery = z.looseObject({
  // Optional to the parser, so its absence is the 400 page rather than a JSON 422; every real redirect carries it.
  state: z
    .string()
    .max(500)
    .optional()
    .openapi({ minLength: 1, param: { required: true } }),
  // RFC 6749 and RFC 9207: a code is printable ASCII, an issuer a URL, so the longest callback URL fits
  // the server's request header limit (api/request-limits.ts).
  code: z
    .string()
    .max(4000)
    .regex(/^[ -~]*$/, 'must be printable ASCII')
    .optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2000).optional(),
  iss: z
    .string()
    .max(2000)
    .regex(/^[!-~]*$/, 'must be a URL')
    .optional(),
});

export const Connection = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    integration: z.string(),
    provider: z.object({ key: z.string(), name: z.string(), simulated: z.boolean() }),
    kind: z.enum(['oauth', 'api_key']).openapi({
      description: 'oauth: connected through consent (connect tokens); api_key: an account connected with its API keys (telephony)',
    }),
    status: z.enum(CONNECTION_STATUSES),
    status_reason: z.string().nullable(),
    external_account_id: z.string(),
    external_account_label: z.string(),
    granted_scopes: z.array(z.string()),
    end_user_id: z.string().nullable(),
    connected_by: z.string().openapi({ description: 'user:<id> of who minted the connect token' }),
    connected_at: Timestamp,
    credential_id: Uuid.nullable().openapi({
      description: 'The workflow credential holding the tokens (values never returned); null once revoked',
    }),
    expires_at: Timestamp.nullable(),
    last_refresh_at: Timestamp.nullable(),
    last_refresh_status: z.enum(['success', 'failed', 'running']).nullable(),
    last_refresh_error: z.string().nullable(),
    revoked_at: Timestamp.nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi('IntegrationConnection');

export const ConnectionList = z
  .object({ data: z.array(Connection), next_cursor: z.string().nullable() })
  .openapi('IntegrationConnectionList');
export const ConnectionQuery = z.object({
  status: z.enum(CONNECTION_STATUSES).optional(),
  integration: z.string().max(100).optional(),
  end_user_id: z.string().max(200).optional(),
  limit: cappedLimit(50, 100),
  cursor: cursorQuery(CreatedCursor),
});

export const IntegrationSettings = z
  .object({ allowed_redirect_origins: z.array(z.string()), updated_at: Timestamp.nullable() })
  .openapi('IntegrationSettings');
export const PutIntegrationSettingsBody = z
  .strictObject({
    allowed_redirect_origins: z
      .array(z.url({ protocol: /^https?$/ }).max(2000))
      .max(50)
      .openapi({ description: "Origins (scheme, host, port) connect tokens' success_url and error_url may use; empty allows none" }),
  })
  .openapi('PutIntegrationSettings');

// ---- telephony accounts (API keys) -------------------------------------------------------------------

const TwilioAccountBody = z
  .strictObject({
    provider: z.literal('twilio'),
    account_sid: z.string().regex(/^AC[0-9a-fA-F]{32}$/, 'must be an account SID (AC + 32 hex digits)'),
    auth_token: z
      .string()
      .regex(/^[0-9a-fA-F]{32}$/, 'must be an auth token (32 hex digits)')
      .openapi({ description: "The account's auth token: places calls and verifies Twilio's signed callbacks; never returned" }),
    from_number: phoneNumberField('Caller id when neither the campaign nor the contact names an agent_number').optional(),
  })
  .openapi('TwilioAccountKeys');

const VapiAccountBody = z
  .strictObject({
    provider: z.literal('vapi'),
    api_key: Uuid.openapi({ description: "The organization's private API key; never returned" }),
    phone_number_id: Uuid.openapi({ description: 'The Vapi phone number calls are placed from' }),
  })
  .openapi('VapiAccountKeys');

export const TelephonyAccountBody = z.discriminatedUnion('provider', [TwilioAccountBody, VapiAccountBody]).openapi('TelephonyAccountKeys', {
  description: 'The keys of a Twilio or Vapi account; the provider is asked whether they open the account before anything is stored',
});
