import type { Client } from '@temporalio/client';
import type { Sql } from '../db/client';
import type { Config } from '../platform/config';
import type { Logger } from '../platform/logger';
import type { ObjectStorage } from '../platform/storage/types';

/** What activities are built from; the worker makes one set per process. */
export interface ActivityDeps {
  config: Config;
  sql: Sql;
  storage: ObjectStorage;
  logger: Logger;
  /** For activities that start or signal other workflows (relays, schedules). */
  temporal: Client;
}
