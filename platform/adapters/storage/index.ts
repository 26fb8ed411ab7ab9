import path from 'node:path';
import { publicBaseUrl, type Config } from '../../core/config';
import { deriveKey } from '../../core/secrets';
import { LocalObjectStorage } from './local';
import { S3ObjectStorage } from './s3';
import type { ObjectStorage } from './types';

export * from './types';
export { InvalidKeyError, contentDisposition, verifyLocalSignature, type SignedRequest } from './local';

/**
 * S3 when S3_ENDPOINT is set, else the local disk under DATA_DIR/objects. The signing key and public
 * base URL serve the local driver's presigned URLs; every API and worker process must share them.
 */
export function createStorage(config: Config, options: { signingKey: Buffer; publicBaseUrl: string }): ObjectStorage {
  if (config.S3_ENDPOINT) {
    return new S3ObjectStorage({
      endpoint: config.S3_ENDPOINT,
      region: config.S3_REGION,
      bucket: config.S3_BUCKET,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
      forcePathStyle: config.S3_FORCE_PATH_STYLE,
      socketTimeoutMs: config.S3_SOCKET_TIMEOUT_MS,
    });
  }
  return new LocalObjectStorage(path.join(config.dataDir, 'objects'), options.signingKey, options.publicBaseUrl);
}

/** The store of a process (API or worker): local URLs signed with a key derived from the master key. */
export function createConfiguredStorage(config: Config, masterKey: Buffer): ObjectStorage {
  return createStorage(config, { signingKey: deriveKey(masterKey, 'storage-url'), publicBaseUrl: publicBaseUrl(config) });
}
