import type { ActivityDeps } from './deps';
import { createHealthActivities } from './health';
import { createAgentActivities } from './agents';
import { createAccountActivities } from './accounts';
import { createCampaignActivities } from './campaigns';

/** Every area's activities, registered on the worker as one object. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
    ...createAgentActivities(deps),
    ...createAccountActivities(deps),
    ...createCampaignActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
