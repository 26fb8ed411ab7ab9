import type { ActivityDeps } from './deps';
import { createHealthActivities } from './health';
import { createAgentActivities } from './agents';
import { createAccountActivities } from './accounts';
import { createCampaignActivities } from './campaigns';
import { createCredentialActivities } from './credentials';
import { createMeetingActivities } from './meetings';
import { createKnowledgeBaseActivities } from './knowledge-base';
import { createNotificationActivities } from './notifications';
import { createIntelligenceActivities } from './intelligence';
import { createReadinessActivities } from './readiness';
import { createOutreachActivities } from './outreach';
import { createIntegrationActivities } from './integrations';
import { createAiChatActivities } from './ai-chat';
import { createAnalyticsAssistantActivities } from './analytics-assistant';
import { createConversationActivities } from './conversations';
import { createWebhookActivities } from './webhooks';
import { createReplayActivities } from './replays';

/** Every area's activities, registered on the worker as one object. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createHealthActivities(deps),
    ...createAgentActivities(deps),
    ...createAccountActivities(deps),
    ...createCampaignActivities(deps),
    ...createCredentialActivities(deps),
    ...createMeetingActivities(deps),
    // biome-ignore lint/nursery/noMisusedPromises: the factory returns an object; the nursery rule's type inference misreads it.
    ...createKnowledgeBaseActivities(deps),
    ...createNotificationActivities(deps),
    ...createIntelligenceActivities(deps),
    ...createReadinessActivities(deps),
    ...createOutreachActivities(deps),
    ...createIntegrationActivities(deps),
    ...createAiChatActivities(deps),
    ...createAnalyticsAssistantActivities(deps),
    ...createConversationActivities(deps),
    ...createWebhookActivities(deps),
    ...createReplayActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
