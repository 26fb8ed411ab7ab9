import crypto from 'node:crypto';
import type { Sealed, SealedSecrets } from '../../db/webhooks';
import type { Config } from '../../platform/core/config';
import { keyringFor, loadMasterKey, open, parsePreviousKeys, seal, type Keyring } from '../../platform/core/secrets';

// An endpoint's signing secrets: made here, sealed at rest (AES-256-GCM under ENCRYPTION_KEY's
// `webhook-secrets` subkey, bound to the endpoint), opened only to sign a delivery.

type KeyConfig = Pick<Config, 'ENCRYPTION_KEY' | 'ENCRYPTION_KEYS_PREVIOUS' | 'dataDir'>;

const keyrings = new Map<string, Keyring>();

function webhookKeyring(config: KeyConfig): Keyring {
  const cacheKey = `${config.dataDir}|${config.ENCRYPTION_KEY ?? ''}|${config.ENCRYPTION_KEYS_PREVIOUS ?? ''}`;
  let ring = keyrings.get(cacheKey);
  if (!ring) {
    ring = keyringFor(
      'webhook-secrets',
      loadMasterKey(config.ENCRYPTION_KEY, config.dataDir),
      parsePreviousKeys(config.ENCRYPTION_KEYS_PREVIOUS),
    );
    keyrings.set(cacheKey, ring);
  }
  return ring;
}

const boundTo = (orgId: string, endpointId: string) => `webhook-endpoint:${orgId}:${endpointId}`;

/** A new secret, `whsec_` and the base64 of 32 random bytes (Standard Webhooks: 24 to 64 bytes). */
export const newSecret = (): string => `whsec_${crypto.randomBytes(32).toString('base64')}`;

export function sealSecret(config: KeyConfig, orgId: string, endpointId: string, secret: string): Sealed {
  const sealed = seal(webhookKeyring(config), secret, boundTo(orgId, endpointId));
  return { key_id: sealed.keyId, ciphertext: sealed.ciphertext };
}

/** The secrets that sign now: the current one, and the previous one while its overlap lasts. */
export function openSecrets(config: KeyConfig, orgId: string, endpointId: string, sealed: SealedSecrets): string[] {
  const ring = webhookKeyring(config);
  const secrets = [open(ring, sealed.secret_key_id, sealed.secret_ciphertext, boundTo(orgId, endpointId))];
  if (sealed.previous_secret_key_id && sealed.previous_secret_ciphertext)
    secrets.push(open(ring, sealed.previous_secret_key_id, sealed.previous_secret_ciphertext, boundTo(orgId, endpointId)));
  return secrets;
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>`
 * under each secret's decoded bytes, space-separated (several during a rotation).
 */
export function signatureHeader(secrets: string[], id: string, timestampSeconds: number, body: string): string {
  const content = `${id}.${timestampSeconds}.${body}`;
  return secrets
    .map(
      (secret) =>
        `v1,${crypto
          .createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
          .update(content)
          .digest('base64')}`,
    )
    .join(' ');
}
