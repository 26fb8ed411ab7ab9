import * as db from '../../db/integrations';
import * as speechDb from '../../db/speech-accounts';
import type { ConnectionRow } from '../../db/integrations';
import { conflict, invalid, notFound, upstream } from '../../domain/errors';
import { SPEECH_PROVIDER_NAMES, connectionCredentialName, type SpeechProvider } from '../../domain/integrations';
import { SpeechKeyRefused, SpeechProviderFailed, verifySpeechKey } from '../../platform/adapters/speech/keys';
import { newId } from '../../platform/core/ids';
import { createCredential, deleteCredential, setCredentialValue } from '../credentials/crud';
import { readCredentialValue } from '../credentials/values';
import type { ServiceDeps } from '../deps';
import { catalogOf } from './catalog';
import { announceNeedsReconnect, connectionView } from './connections';

// An organization's speech and model providers (Deepgram, ElevenLabs, Cartesia, OpenAI), each connected with
// an API key through the Integrations area as telephony accounts are: the provider is asked whether the key
// opens an account before anything is stored; the key sits sealed in the connection's workflow credential
// and is never returned; a provider that later refuses it moves the connection to needs_reconnect. The voice
// engine reads the keys when a conversation opens (docs/decisions/voice.md).

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>;

export interface SpeechAccountInput {
  provider: SpeechProvider;
  api_key: string;
}

/** What a conversation may use of a provider: its key, or why there is none to use. */
export type SpeechKey = { provider: SpeechProvider; connectionId: string; apiKey: string } | { provider: SpeechProvider; unusable: string };

async function verify(deps: Pick<ServiceDeps, 'config'>, input: SpeechAccountInput) {
  try {
    return await verifySpeechKey(deps.config, input.provider, input.api_key);
  } catch (error) {
    const name = SPEECH_PROVIDER_NAMES[input.provider];
    if (error instanceof SpeechKeyRefused) throw invalid(`${name} refused the API key`);
    if (error instanceof SpeechProviderFailed) throw upstream(`${name} failed: ${error.message}`);
    throw error;
  }
}

const view = (deps: Pick<ServiceDeps, 'config'>, row: ConnectionRow) => connectionView(row, catalogOf(deps.config));

const oneKeyEach = (provider: SpeechProvider) =>
  `The organization already has a ${SPEECH_PROVIDER_NAMES[provider]} account: put a new key on it, or delete it before connecting another`;

/** Connects the organization's account at a provider (one per provider: 409 while another is not revoked). */
export async function connectSpeechAccount(deps: Deps, orgId: string, actor: string, input: SpeechAccountInput) {
  const live = await speechDb.liveSpeechConnections(deps.sql, orgId);
  if (live.some((row) => row.integration === input.provider)) throw conflict(oneKeyEach(input.provider));
  const verified = await verify(deps, input);
  const id = newId();
  const credential = await createCredential(deps, orgId, actor, {
    name: connectionCredentialName(input.provider, id),
    description: `API key of the organization's ${SPEECH_PROVIDER_NAMES[input.provider]} account`,
    value: { integration: input.provider, api_key: input.api_key },
  });
  try {
    await db.insertConnection(
      deps.sql,
      orgId,
      id,
      {
        integration: input.provider,
        kind: 'api_key',
        externalAccountId: verified.external_id,
        externalAccountLabel: verified.label,
        grantedScopes: [],
        endUserId: null,
        connectedBy: actor,
        credentialId: credential.id,
      },
      oneKeyEach(input.provider),
    );
  } catch (error) {
    // No credential without its connection.
    await deleteCredential(deps, orgId, credential.id).catch(() => {});
    throw error;
  }
  return view(deps, (await db.getConnection(deps.sql, orgId, id))!);
}

/** A new key for the provider's connection (rotated, or after the provider refused the old one): checked first. */
export async function putSpeechKey(deps: Deps, orgId: string, actor: string, id: string, input: SpeechAccountInput) {
  const row = await db.getConnection(deps.sql, orgId, id);
  if (row?.kind !== 'api_key' || !(row.integration in SPEECH_PROVIDER_NAMES)) throw notFound('Connection not found');
  if (row.status === 'revoked' || !row.credential_id) throw conflict('The connection is revoked: connect the account again');
  if (row.integration !== input.provider)
    throw conflict(`The connection is a ${SPEECH_PROVIDER_NAMES[row.integration as SpeechProvider]} account`);
  const verified = await verify(deps, input);
  await setCredentialValue(deps, orgId, row.credential_id, { integration: input.provider, api_key: input.api_key }, null, {
    source: 'input',
    actor,
    merge: false,
  });
  await speechDb.rekeySpeechConnection(deps.sql, orgId, id, {
    externalAccountId: verified.external_id,
    externalAccountLabel: verified.label,
    connectedBy: actor,
  });
  return view(deps, (await db.getConnection(deps.sql, orgId, id))!);
}

/** The organization's provider keys, read when a conversation opens; a refused or unreadable one says why. */
export async function speechKeysOf(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string): Promise<SpeechKey[]> {
  const rows = await speechDb.liveSpeechConnections(deps.sql, orgId);
  return Promise.all(
    rows.map(async (row): Promise<SpeechKey> => {
      const provider = row.integration as SpeechProvider;
      const name = SPEECH_PROVIDER_NAMES[provider];
      if (row.status === 'needs_reconnect') return { provider, unusable: `${name} refused the organization's key: put a new one` };
      const value = row.credential_id ? await readCredentialValue(deps, orgId, row.credential_id) : null;
      const apiKey = typeof value?.api_key === 'string' ? value.api_key : '';
      return apiKey ? { provider, connectionId: row.id, apiKey } : { provider, unusable: `the ${name} key is gone` };
    }),
  );
}

/** The provider refused a connected key during a conversation: needs_reconnect once, and its connector hears of it. */
export async function markSpeechKeyRefused(deps: Pick<ServiceDeps, 'sql'>, orgId: string, connectionId: string, error: string) {
  await deps.sql.begin(async (tx) => {
    const moved = await speechDb.markSpeechNeedsReconnect(
      tx,
      orgId,
      connectionId,
      'The provider refused the API key: put a new one (PUT /integrations/speech-accounts/{connection_id})',
    );
    if (moved) await announceNeedsReconnect(tx, orgId, moved, error);
  });
}
