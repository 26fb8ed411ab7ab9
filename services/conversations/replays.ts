import * as agents from '../../db/agents';
import * as versions from '../../db/agent-versions';
import * as conversations from '../../db/conversations';
import * as replays from '../../db/conversation-replays';
import { conflict, notFound } from '../../domain/errors';
import { newId } from '../../platform/core/ids';
import type { ServiceDeps } from '../deps';
import { startWorkflow } from '../workflow-client';
import { replayWorkflowId, replayWorkflowRef, voiceTaskQueue } from '../../workflows/replay-messages';

// Replays as the API starts and reads them: a recorded conversation, or an agent's last ended ones,
// run again through another version of the agent (one workflow each), and the result side by side.

type Deps = Pick<ServiceDeps, 'sql' | 'temporal' | 'config'>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function replayView(row: replays.ReplayRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    conversation_id: row.conversation_id,
    batch_id: row.batch_id,
    version: row.version,
    call_tools: row.call_tools,
    status: row.status,
    error: row.error,
    counts: row.turn_count === null ? null : { turns: row.turn_count, changed: row.changed_count ?? 0 },
    timings: row.status === 'completed' ? row.timings : null,
    turns: row.turns,
    created_at: row.created_at.toISOString(),
    started_at: iso(row.started_at),
    finished_at: iso(row.finished_at),
  };
}

async function versionOf(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, version: number) {
  if (!(await agents.getAgent(deps.sql, orgId, agentId))) throw notFound('Agent not found');
  if (!(await versions.getVersion(deps.sql, orgId, agentId, version))) throw notFound('Version not found');
}

/**
 * Writes the replays and starts their workflows in one transaction: Temporal unreachable rolls the rows
 * back (503, nothing written); each workflow's first activity waits for its row to be committed.
 */
async function start(deps: Deps, rows: replays.NewReplay[], batch?: Omit<replays.BatchRow, 'created_at'>) {
  return deps.sql.begin(async (tx) => {
    const group = batch ? await replays.insertBatch(tx, batch) : undefined;
    const made = await replays.insertReplays(tx, rows);
    for (const row of made)
      await startWorkflow(deps, replayWorkflowRef, row.org_id, {
        workflowId: replayWorkflowId(row.id),
        args: [{ orgId: row.org_id, replayId: row.id, engineQueue: voiceTaskQueue(deps.config.TEMPORAL_TASK_QUEUE) }],
      });
    return { made, group };
  });
}

export async function startReplay(
  deps: Deps,
  orgId: string,
  agentId: string,
  conversationId: string,
  body: { version: number; call_tools: boolean },
) {
  await versionOf(deps, orgId, agentId, body.version);
  const conversation = await conversations.getConversation(deps.sql, orgId, conversationId);
  if (!conversation || conversation.agent_id !== agentId) throw notFound('Conversation not found');
  if (!conversation.ended_at) throw conflict('The conversation has not ended; only an ended conversation can be replayed');
  const {
    made: [row],
  } = await start(deps, [{ id: newId(), org_id: orgId, agent_id: agentId, conversation_id: conversationId, batch_id: null, ...body }]);
  return replayView(row!);
}

/** The replays of a batch, each as a summary line, and what they add up to. */
function batchView(batch: replays.BatchRow, rows: replays.ReplayRow[]) {
  const count = (status: replays.ReplayRow['status']) => rows.filter((r) => r.status === status).length;
  const done = rows.filter((r) => r.status === 'completed');
  const status: replays.ReplayRow['status'] =
    count('queued') + count('running') > 0
      ? count('queued') === rows.length
        ? 'queued'
        : 'running'
      : count('completed')
        ? 'completed'
        : 'failed';
  return {
    id: batch.id,
    agent_id: batch.agent_id,
    version: batch.version,
    call_tools: batch.call_tools,
    status,
    summary: {
      replays: rows.length,
      queued: count('queued'),
      running: count('running'),
      completed: done.length,
      failed: count('failed'),
      turns: done.reduce((n, r) => n + (r.turn_count ?? 0), 0),
      changed: done.reduce((n, r) => n + (r.changed_count ?? 0), 0),
      conversations_changed: done.filter((r) => (r.changed_count ?? 0) > 0).length,
    },
    replays: rows.map((r) => ({
      id: r.id,
      conversation_id: r.conversation_id,
      status: r.status,
      error: r.error,
      counts: r.turn_count === null ? null : { turns: r.turn_count, changed: r.changed_count ?? 0 },
    })),
    created_at: batch.created_at.toISOString(),
  };
}

export async function startReplayBatch(
  deps: Deps,
  orgId: string,
  agentId: string,
  body: { version: number; last: number; call_tools: boolean },
) {
  await versionOf(deps, orgId, agentId, body.version);
  const ended = await replays.lastEndedConversations(deps.sql, orgId, agentId, body.last);
  if (!ended.length) throw conflict('The agent has no ended conversation to replay');
  const batch = { id: newId(), org_id: orgId, agent_id: agentId, version: body.version, call_tools: body.call_tools };
  const { made, group } = await start(
    deps,
    ended.map((c) => ({
      id: newId(),
      org_id: orgId,
      agent_id: agentId,
      conversation_id: c.id,
      batch_id: batch.id,
      version: body.version,
      call_tools: body.call_tools,
    })),
    batch,
  );
  return batchView(group!, made);
}

export async function getReplay(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, replayId: string) {
  const row = await replays.getReplay(deps.sql, orgId, replayId);
  if (!row || row.agent_id !== agentId) throw notFound('Replay not found');
  return replayView(row);
}

export async function getReplayBatch(deps: Pick<ServiceDeps, 'sql'>, orgId: string, agentId: string, batchId: string) {
  const batch = await replays.getBatch(deps.sql, orgId, batchId);
  if (!batch || batch.agent_id !== agentId) throw notFound('Replay batch not found');
  return batchView(batch, await replays.batchReplays(deps.sql, orgId, batchId));
}
