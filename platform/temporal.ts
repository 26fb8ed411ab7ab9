import fs from 'node:fs';
import {
  Client,
  Connection,
  ServiceError,
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
  type TLSConfig,
} from '@temporalio/client';
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import type { Config } from './config';

/**
 * One task queue carries every workflow and activity; its name is TEMPORAL_TASK_QUEUE (default
 * `voice-crm-main`), read from the config by the API, the worker and the tests, so test files can
 * run isolated workers side by side on one server.
 */

/** Every workflow carries its organization, so operators can filter the Temporal UI by tenant. */
export const ORGANIZATION_ID = defineSearchAttributeKey('OrganizationId', SearchAttributeType.KEYWORD);

export const organizationAttribute = (orgId: string) => [{ key: ORGANIZATION_ID, value: orgId }];

/** Address and TLS, in the shape both the client's Connection and the worker's NativeConnection take. */
export function connectionOptions(
  config: Pick<Config, 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH' | 'TEMPORAL_TLS_CA_PATH'>,
  address: string,
): { address: string; tls?: TLSConfig } {
  const tls =
    config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH
      ? {
          clientCertPair: {
            crt: fs.readFileSync(config.TEMPORAL_TLS_CERT_PATH),
            key: fs.readFileSync(config.TEMPORAL_TLS_KEY_PATH),
          },
          ...(config.TEMPORAL_TLS_CA_PATH ? { serverRootCACertificate: fs.readFileSync(config.TEMPORAL_TLS_CA_PATH) } : {}),
        }
      : undefined;
  return { address, tls };
}

/**
 * A client whose connection is made on first use, so the API starts (and answers 503) while Temporal
 * is down. Retries of unavailable calls are few and short: an API request should fail in seconds.
 */
export function createTemporalClient(address: string, namespace: string, options: Omit<ConnectionOptions, 'address'> = {}): Client {
  const retry = makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3, maxJitter: 0.1 }));
  const connection = Connection.lazy({ ...options, address, connectTimeout: '3s', interceptors: [retry] });
  return new Client({ connection, namespace });
}

const UNAVAILABLE_CODES = new Set([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

/** True for errors that mean "the workflow engine cannot be reached", which the API answers with 503. */
export function isTemporalUnavailable(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : error;
  if (isGrpcServiceError(cause)) return UNAVAILABLE_CODES.has(cause.code);
  const message = error instanceof Error ? error.message : '';
  return /Failed to connect|connect ECONNREFUSED|TransportError|Connection refused/i.test(message);
}

/** Liveness of the Temporal frontend, bounded in time. */
export async function temporalReachable(client: Client, timeoutMs = 2000): Promise<boolean> {
  try {
    await client.connection.withDeadline(Date.now() + timeoutMs, () =>
      client.workflowService.getSystemInfo({}),
    );
    return true;
  } catch {
    return false;
  }
}
