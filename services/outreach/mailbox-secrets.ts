import type { Db } from '../../db/client';
import * as credentials from '../../db/credentials';
import { describeSecrets } from '../../domain/credentials';
import type { Config } from '../../platform/core/config';
import { newId } from '../../platform/core/ids';
import { open, seal } from '../../platform/core/secrets';
import { credentialKeyring, sealedFor } from '../credentials/values';

// The outreach area's secrets (mailbox passwords, DKIM keys): workflow credentials, sealed, never in
// the row that names them, a response or a log line.

/**
 * Stores a secret of the outreach area as a new workflow credential, sealed, inside the caller's
 * transaction (so the row that names it and the credential exist together or not at all).
 */
export async function storeOutreachSecret(
  tx: Db,
  config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>,
  orgId: string,
  actor: string,
  input: { name: string; description: string; value: Record<string, string> },
): Promise<string> {
  const id = newId();
  await credentials.insertCredential(
    tx,
    orgId,
    id,
    {
      name: input.name,
      description: input.description,
      refresher_workflow_id: null,
      refresh_input: {},
      refresh_policy: { type: 'manual' },
      temporal_schedule_id: null,
    },
    actor,
  );
  const sealed = seal(credentialKeyring(config), JSON.stringify(input.value), sealedFor(orgId, id));
  const keys = Object.keys(input.value).sort();
  await credentials.storeSealedValue(
    tx,
    orgId,
    id,
    {
      keyId: sealed.keyId,
      ciphertext: sealed.ciphertext,
      valueKeys: keys,
      secrets: describeSecrets(input.value, keys, 'input', new Date()),
      expiresAt: null,
    },
    actor,
  );
  return id;
}

/** The decrypted value of an outreach secret; for senders and activities only. */
export async function readOutreachSecret(
  db: Db,
  config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>,
  orgId: string,
  id: string | null,
) {
  if (!id) return null;
  const sealed = await credentials.getSealedValue(db, orgId, id);
  if (!sealed) return null;
  return JSON.parse(open(credentialKeyring(config), sealed.key_id, sealed.ciphertext, sealedFor(orgId, id))) as Record<string, string>;
}
