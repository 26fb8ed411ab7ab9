import type { ActivityDeps } from './deps';
import { createHealthActivities } from './health';

/** Every area's activities, registered on the worker as one object. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
