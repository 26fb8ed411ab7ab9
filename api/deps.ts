import type { Client } from '@temporalio/client';
import type { Sql } from '../db/client';
import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import type { ObjectStorage } from '../platform/storage/types';
import type { TokenVerifier } from './auth/verifier';
import type { DevIdp } from '../platform/dev-idp';

/** Everything a router may use; built once per process (or per test) and passed in, never global. */
export interface AppDeps {
  config: Config;
  sql: Sql;
  temporal: Client;
  storage: ObjectStorage;
  logger: Logger;
  verifier: TokenVerifier;
  /** Present when the service runs its own development identity provider. */
  devIdp: DevIdp | null;
}
