import type { ServiceDeps } from '../services/deps';

/** What activities are built from (the worker makes one set per process): what services take. */
export type ActivityDeps = ServiceDeps;
