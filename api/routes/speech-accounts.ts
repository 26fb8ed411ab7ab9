import * as speech from '../../services/integrations/speech-accounts';
import { actor, orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import type { Routes } from '../route';
import { ErrorBody, authErrors, validationError } from '../schemas/common';
import { Connection, ConnectionParams } from '../schemas/integrations';
import { SpeechAccountBody } from '../schemas/speech-accounts';

// Routes only declare: schemas, auth, the statuses they answer, and a one-line call into the service.
// The connection is read, listed and revoked through /integrations/connections like every other.

const providerErrors = {
  400: { description: 'The provider refused the key; nothing is stored', schema: ErrorBody },
  502: { description: 'The provider failed or did not answer within INTEGRATION_HTTP_TIMEOUT_MS; nothing is stored', schema: ErrorBody },
};

export function registerSpeechAccountRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/integrations/speech-accounts',
    tag: 'Integrations',
    summary:
      "Connect the organization's account at a speech or model provider (Deepgram, ElevenLabs, Cartesia, OpenAI) with its API key: agents configured for it then speak, listen or think through it",
    auth: { scope: 'crmManage' },
    body: SpeechAccountBody,
    responses: {
      200: { description: 'The connection (kind api_key; the key is sealed in its credential and never returned)', schema: Connection },
      ...providerErrors,
      409: { description: 'The organization already has an account at this provider that is not revoked', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, body }) => speech.connectSpeechAccount(deps, orgOf(auth), actor(auth), body),
  });

  routes.add({
    method: 'put',
    path: '/integrations/speech-accounts/{connection_id}',
    tag: 'Integrations',
    summary: "Put a new API key on the provider's connection (a rotated key, or a reconnect after the provider refused the old one)",
    auth: { scope: 'crmManage' },
    params: ConnectionParams,
    body: SpeechAccountBody,
    responses: {
      200: { description: 'The connection, active again', schema: Connection },
      ...providerErrors,
      404: { description: 'Not a speech or model provider account of the organization', schema: ErrorBody },
      409: { description: 'Revoked, or an account at another provider', schema: ErrorBody },
      ...authErrors,
      ...validationError,
    },
    handler: async ({ auth, params, body }) => speech.putSpeechKey(deps, orgOf(auth), actor(auth), params.connection_id, body),
  });
}
