import * as credentials from '../../db/credentials';
import type { Db } from '../../db/client';
import type { CredentialRow } from '../../db/credentials';
import { describeSecrets, type SecretEntry } from '../../domain/credentials';
import type { Config } from '../../platform/core/config';
import { keyringFor, loadMasterKey, open, parsePreviousKeys, seal, type Keyring } from '../../platform/core/secrets';
import type { ServiceDeps } from '../deps';

// A credential's value: write-only through the API, sealed with AES-256-GCM under a key id, opened
// only for activities; re-sealed under the current key after a key rotation.

export type Value = Record<string, unknown>;

const keyrings = new Map<string, Keyring>();

/** The keyring that seals credential values: a subkey of ENCRYPTION_KEY, plus those of ENCRYPTION_KEYS_PREVIOUS. */
export function credentialKeyring(config: Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>): Keyring {
  const cacheKey = `${config.dataDir}|${config.ENCRYPTION_KEY ?? ''}|${config.ENCRYPTION_KEYS_PREVIOUS ?? ''}`;
  let ring = keyrings.get(cacheKey);
  if (!ring) {
    ring = keyringFor(
      'credential-values',
      loadMasterKey(config.ENCRYPTION_KEY, config.dataDir),
      parsePreviousKeys(config.ENCRYPTION_KEYS_PREVIOUS),
    );
    keyrings.set(cacheKey, ring);
  }
  return ring;
}

/** The associated data of a sealed value: the ciphertext opens only on its own row. */
export const sealedFor = (orgId: string, credentialId: string) => `workflow-credential:${orgId}:${credentialId}`;

/** The decrypted value, for activities only: it must never reach a response, a log line or a workflow history. */
export async function readCredentialValue(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, id: string): Promise<Value | null> {
  return readValue(deps.sql, deps.config, orgId, id);
}

async function readValue(db: Db, config: ServiceDeps['config'], orgId: string, id: string): Promise<Value | null> {
  const sealed = await credentials.getSealedValue(db, orgId, id);
  if (!sealed) return null;
  return JSON.parse(open(credentialKeyring(config), sealed.key_id, sealed.ciphertext, sealedFor(orgId, id))) as Value;
}

/** Seals and stores a value on a row the caller has locked; `secrets` keeps the entries of unchanged keys. */
export async function writeValue(
  tx: Db,
  config: ServiceDeps['config'],
  orgId: string,
  id: string,
  value: Value,
  expiresAt: string | Date | null,
  options: { source: SecretEntry['source']; actor: string | null; merge: boolean },
): Promise<CredentialRow> {
  const sealedBefore = await credentials.getSealedValue(tx, orgId, id);
  const before = sealedBefore
    ? (JSON.parse(open(credentialKeyring(config), sealedBefore.key_id, sealedBefore.ciphertext, sealedFor(orgId, id))) as Value)
    : {};
  const next = options.merge ? { ...before, ...value } : value;
  const written = Object.keys(value).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(value[k]));
  const secrets = describeSecrets(next, written, options.source, new Date(), sealedBefore?.secrets ?? []);
  const sealed = seal(credentialKeyring(config), JSON.stringify(next), sealedFor(orgId, id));
  const row = await credentials.storeSealedValue(
    tx,
    orgId,
    id,
    {
      keyId: sealed.keyId,
      ciphertext: sealed.ciphertext,
      valueKeys: Object.keys(next).sort(),
      secrets,
      expiresAt: expiresAt === null ? null : new Date(expiresAt),
    },
    options.actor,
  );
  return row!;
}

/**
 * Re-seals every value sealed by a key other than the current one (after ENCRYPTION_KEY changed and the
 * old key moved to ENCRYPTION_KEYS_PREVIOUS). Batches are short transactions; rows being written
 * meanwhile are skipped and picked up by the next pass. Returns how many values were re-sealed.
 */
export async function resealCredentialValues(deps: Pick<ServiceDeps, 'sql' | 'config'>, batchSize = 200): Promise<number> {
  const ring = credentialKeyring(deps.config);
  let total = 0;
  for (;;) {
    const orgs = await credentials.orgsWithOtherKeys(deps.sql, ring.current.id);
    if (orgs.length === 0) return total;
    let progressed = 0;
    for (const orgId of orgs) {
      for (;;) {
        const done = await deps.sql.begin(async (tx) => {
          const batch = await credentials.valuesWithOtherKeys(tx, orgId, ring.current.id, batchSize);
          for (const row of batch) {
            const plain = open(ring, row.key_id, row.ciphertext, sealedFor(orgId, row.id));
            const sealed = seal(ring, plain, sealedFor(orgId, row.id));
            await credentials.resealValue(tx, orgId, row.id, sealed.keyId, sealed.ciphertext);
          }
          return batch.length;
        });
        total += done;
        progressed += done;
        if (done < batchSize) break;
      }
    }
    if (progressed === 0) return total; // only rows locked by writers remain; they are sealed with the current key
  }
}
