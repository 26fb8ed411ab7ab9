import { hash, verify } from '@node-rs/argon2';
import { randomToken } from '../../platform/core/secrets';

// Token formats. ak_<key_id>.<secret> as the API contract fixes it; pat_<key_id><secret>, where the first 16
// characters are the lookup id, so an unknown token is refused by one indexed read and no Argon2 run.
const KEY_ID_LENGTH = 16;
const SECRET_BYTES = 32;
const PART = '[A-Za-z0-9_-]';
const AK_PATTERN = new RegExp(`^ak_(${PART}{${KEY_ID_LENGTH}})\\.(${PART}{43})$`);
const PAT_PATTERN = new RegExp(`^pat_(${PART}{${KEY_ID_LENGTH}})(${PART}{43})$`);

export interface IssuedToken {
  token: string;
  keyId: string;
  secretHash: string;
}

const newKeyId = () => randomToken(12); // 16 characters
const ARGON2ID = 2; // @node-rs/argon2's Algorithm.Argon2id (a const enum, not importable as a value here)

export async function issueToken(kind: 'organization' | 'user'): Promise<IssuedToken> {
  const keyId = newKeyId();
  const secret = randomToken(SECRET_BYTES);
  const token = kind === 'organization' ? `ak_${keyId}.${secret}` : `pat_${keyId}${secret}`;
  return { token, keyId, secretHash: await hash(secret, { algorithm: ARGON2ID }) };
}

/** Splits a prefixed token; undefined when it is not well formed. */
export function parseToken(token: string): { kind: 'organization' | 'user'; keyId: string; secret: string } | undefined {
  const ak = AK_PATTERN.exec(token);
  if (ak) return { kind: 'organization', keyId: ak[1]!, secret: ak[2]! };
  const pat = PAT_PATTERN.exec(token);
  if (pat) return { kind: 'user', keyId: pat[1]!, secret: pat[2]! };
  return undefined;
}

export const isPrefixedToken = (token: string) => token.startsWith('ak_') || token.startsWith('pat_');

export const verifySecret = (secretHash: string, secret: string) => verify(secretHash, secret);
