import { createHash } from 'node:crypto';
import type { AgentConfig } from './agent-config';

// The tools a voice conversation's model may call, from the version's configuration: its own tools, a
// knowledge-base search when the version names datasets, and a transfer when its transfer rules are on.

export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

type Destination = { phone_number?: string; sip_uri?: string; description?: string };

export type VoiceTool = ModelTool &
  (
    | { kind: 'webhook'; tool: Extract<AgentConfig['tools'][number], { type: 'webhook' }>; speakWhileWaiting: string | null }
    | { kind: 'knowledge_base'; datasetIds: string[]; resultsCount: number; speakWhileWaiting: string | null }
    | { kind: 'transfer'; destinations: Destination[]; mode: 'cold' | 'warm'; message: string | undefined; speakWhileWaiting: null }
    | { kind: 'end_call'; message: string | undefined; speakWhileWaiting: null }
  );

const QUERY = {
  type: 'object',
  properties: { query: { type: 'string', description: 'what to look up, in a few words' } },
  required: ['query'],
};

const destinationParameter = (destinations: Destination[]) => ({
  type: 'object',
  properties: {
    destination: {
      type: 'integer',
      minimum: 1,
      maximum: destinations.length,
      description: destinations.map((d, i) => `${i + 1}: ${d.description ?? d.phone_number ?? d.sip_uri}`).join('; '),
    },
  },
  required: destinations.length > 1 ? ['destination'] : [],
});

export function voiceTools(config: AgentConfig): VoiceTool[] {
  const tools: VoiceTool[] = [];
  for (const t of config.tools) {
    switch (t.type) {
      case 'webhook':
        tools.push({
          kind: 'webhook',
          name: t.name,
          description: t.description,
          parameters: t.parameters,
          tool: t,
          speakWhileWaiting: t.speak_while_waiting ?? null,
        });
        break;
      case 'knowledge_base':
        tools.push({
          kind: 'knowledge_base',
          name: t.name,
          description: t.description,
          parameters: QUERY,
          datasetIds: t.dataset_ids,
          resultsCount: t.results_count,
          speakWhileWaiting: null,
        });
        break;
      case 'transfer_call':
        tools.push({
          kind: 'transfer',
          name: t.name,
          description: t.description,
          parameters: destinationParameter(t.destinations),
          destinations: t.destinations,
          mode: t.mode,
          message: t.message,
          speakWhileWaiting: null,
        });
        break;
      case 'end_call':
        tools.push({
          kind: 'end_call',
          name: t.name,
          description: t.description,
          parameters: { type: 'object', properties: {} },
          message: t.message,
          speakWhileWaiting: null,
        });
        break;
    }
  }
  const taken = new Set(tools.map((t) => t.name));
  if (config.knowledge_base.dataset_ids.length && !taken.has('search_knowledge_base'))
    tools.push({
      kind: 'knowledge_base',
      name: 'search_knowledge_base',
      description: 'Search the knowledge base for facts to answer the caller',
      parameters: QUERY,
      datasetIds: config.knowledge_base.dataset_ids,
      resultsCount: config.knowledge_base.results_count,
      speakWhileWaiting: null,
    });
  if (config.transfer.enabled && !taken.has('transfer_call')) {
    const destinations: Destination[] = config.transfer.rules.map((r) => ({ phone_number: r.destination, description: r.condition }));
    if (config.transfer.default_destination)
      destinations.push({ phone_number: config.transfer.default_destination, description: 'anything else' });
    if (destinations.length)
      tools.push({
        kind: 'transfer',
        name: 'transfer_call',
        description: 'Transfer the call to a person, when the transfer rules say so or the caller asks for a person',
        parameters: destinationParameter(destinations),
        destinations,
        mode: 'cold',
        message: config.transfer.rules[0]?.message,
        speakWhileWaiting: null,
      });
  }
  return tools;
}

/** JSON with object keys in order: the same arguments always write the same text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/**
 * A tool call's idempotency key: the conversation, the caller's turn it answers, the tool and its
 * arguments. The model's own call id changes when another engine takes the conversation over and asks
 * the model again; this key does not, so the tool runs once (the workflow's update id, and the
 * `Idempotency-Key` a webhook receives).
 */
export function toolCallKey(conversationId: string, callerTurn: number, name: string, args: unknown): string {
  const digest = createHash('sha256').update(stableJson(args)).digest('hex').slice(0, 24);
  return `${conversationId}:${callerTurn}:${name}:${digest}`;
}
