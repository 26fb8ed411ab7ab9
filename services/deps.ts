import type { Client } from '@temporalio/client';
import type { Sql } from '../db/client';
import type { Config } from '../platform/core/config';
import type { Logger } from '../platform/core/logger';
import type { ObjectStorage } from '../platform/adapters/storage/types';

/**
 * What a service (a use case: transactions, Temporal starts and updates, storage) is built from.
 * Routes hand over their AppDeps, activities their ActivityDeps; a service takes only the part it uses
 * (`Pick<ServiceDeps, 'sql' | 'temporal'>`), so activities without a Temporal client can call it too.
 */
export interface ServiceDeps {
  config: Config;
  sql: Sql;
  temporal: Client;
  storage: ObjectStorage;
  logger: Logger;
}
