import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The 32-byte master key: ENCRYPTION_KEY when set, else a development key generated once under
 * DATA_DIR (production config refuses to start without the identity provider, and should set it).
 */
export function loadMasterKey(encryptionKeyHex: string | undefined, dataDir: string): Buffer {
  if (encryptionKeyHex) return Buffer.from(encryptionKeyHex, 'hex');
  const file = path.join(dataDir, 'keys', 'encryption.key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'hex');
}

/** A purpose-bound subkey, so one master key never signs and encrypts with the same bytes. */
export function deriveKey(master: Buffer, purpose: string): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), purpose, 32));
}

/** AES-256-GCM; the output packs iv, tag and ciphertext as base64. */
export function encrypt(key: Buffer, plaintext: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
}

export function decrypt(key: Buffer, packed: string): string {
  const raw = Buffer.from(packed, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** SHA-256 in hex; the one-shot `crypto.hash` (Node 20.12+) where there is one, a third of the cost of a Hash object. */
export const sha256: (value: string) => string =
  typeof crypto.hash === 'function'
    ? (value) => crypto.hash('sha256', value, 'hex')
    : (value) => crypto.createHash('sha256').update(value).digest('hex');

/** URL-safe random text of the given byte length. */
export const randomToken = (bytes: number): string => crypto.randomBytes(bytes).toString('base64url');

/**
 * Keys that seal stored values, each known by a short id (a fingerprint of the key, never the key).
 * `current` seals new values; `previous` keys only open values sealed before a rotation.
 */
export interface Keyring {
  current: { id: string; key: Buffer };
  byId: Map<string, Buffer>;
}

/** The id of a sealing key: 16 hex characters of its SHA-256, stored beside each ciphertext. */
export const keyId = (key: Buffer): string => crypto.createHash('sha256').update(key).digest('hex').slice(0, 16);

/** A keyring for one purpose from the master key and any previous master keys (ENCRYPTION_KEYS_PREVIOUS). */
export function keyringFor(purpose: string, master: Buffer, previousMasters: Buffer[] = []): Keyring {
  const current = deriveKey(master, purpose);
  const byId = new Map<string, Buffer>();
  for (const old of previousMasters) {
    const key = deriveKey(old, purpose);
    byId.set(keyId(key), key);
  }
  byId.set(keyId(current), current);
  return { current: { id: keyId(current), key: current }, byId };
}

/** Previous master keys from a comma-separated list of 64-hex keys. */
export const parsePreviousKeys = (list: string | undefined): Buffer[] =>
  (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((hex) => Buffer.from(hex, 'hex'));

export class UnknownKeyError extends Error {}

/**
 * AES-256-GCM with the current key and associated data binding the ciphertext to its owner (a row id),
 * so a ciphertext copied onto another row does not open. Output: base64 of iv | tag | ciphertext.
 */
export function seal(ring: Keyring, plaintext: string, associated: string): { keyId: string; ciphertext: string } {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', ring.current.key, iv);
  cipher.setAAD(Buffer.from(associated, 'utf8'));
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { keyId: ring.current.id, ciphertext: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64') };
}

export function open(ring: Keyring, sealedKeyId: string, ciphertext: string, associated: string): string {
  const key = ring.byId.get(sealedKeyId);
  if (!key) throw new UnknownKeyError(`No key with id ${sealedKeyId} is configured (set ENCRYPTION_KEYS_PREVIOUS)`);
  const raw = Buffer.from(ciphertext, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(associated, 'utf8'));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
