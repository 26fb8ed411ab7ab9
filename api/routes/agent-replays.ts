import * as replays from '../../services/conversations/replays';
import { orgOf } from '../auth/context';
import type { AppDeps } from '../deps';
import { reply, type Routes } from '../route';
import { ConversationParams } from '../schemas/agent-conversations';
import { Replay, ReplayBatch, ReplayBatchCreate, ReplayBatchParams, ReplayCreate, ReplayParams } from '../schemas/agent-replays';
import { ErrorBody, IdParams, authErrors, notFoundError, validationError, workflowUnavailable } from '../schemas/common';

// Replays: a recorded conversation run again through another version of the agent before it is published.

const TAG = 'Agents';

export function registerAgentReplayRoutes(routes: Routes, deps: AppDeps): void {
  routes.add({
    method: 'post',
    path: '/core/agents/{id}/conversations/{conversation_id}/replays',
    tag: TAG,
    summary: 'Replay an ended conversation through a version of the agent, in the background',
    description:
      "Each caller turn's recorded audio (or, with no dual-channel recording, its text spoken by the engine's voice) is heard and answered by the version as a live call would be; the result shows the old and the new answer of each turn.",
    auth: { scope: 'agentsManage' },
    params: ConversationParams,
    body: ReplayCreate,
    responses: {
      202: { description: 'Queued', schema: Replay },
      404: { description: 'Agent, conversation or version not found in the organization', schema: ErrorBody },
      409: { description: 'The conversation has not ended', schema: ErrorBody },
      ...workflowUnavailable,
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, body, auth }) =>
      reply(202, await replays.startReplay(deps, orgOf(auth), params.id, params.conversation_id, body)),
  });
  routes.add({
    method: 'post',
    path: '/core/agents/{id}/replays',
    tag: TAG,
    summary: "Replay the agent's last ended conversations through a version, in the background",
    auth: { scope: 'agentsManage' },
    params: IdParams,
    body: ReplayBatchCreate,
    responses: {
      202: { description: 'Queued: the batch, with one replay per conversation', schema: ReplayBatch },
      404: { description: 'Agent or version not found in the organization', schema: ErrorBody },
      409: { description: 'The agent has no ended conversation', schema: ErrorBody },
      ...workflowUnavailable,
      ...authErrors,
      ...validationError,
    },
    handler: async ({ params, body, auth }) => reply(202, await replays.startReplayBatch(deps, orgOf(auth), params.id, body)),
  });
  routes.add({
    method: 'get',
    path: '/core/agents/{id}/replays/{replay_id}',
    tag: TAG,
    summary: 'One replay: its status and, once completed, each turn old and new side by side',
    auth: { scope: 'agentsRead' },
    params: ReplayParams,
    responses: { 200: { description: 'The replay', schema: Replay }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => replays.getReplay(deps, orgOf(auth), params.id, params.replay_id),
  });
  routes.add({
    method: 'get',
    path: '/core/agents/{id}/replay-batches/{batch_id}',
    tag: TAG,
    summary: 'One batch of replays: each replay and what they add up to',
    auth: { scope: 'agentsRead' },
    params: ReplayBatchParams,
    responses: { 200: { description: 'The batch', schema: ReplayBatch }, ...authErrors, ...notFoundError, ...validationError },
    handler: async ({ params, auth }) => replays.getReplayBatch(deps, orgOf(auth), params.id, params.batch_id),
  });
}
