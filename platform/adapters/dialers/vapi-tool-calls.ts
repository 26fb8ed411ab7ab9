// Vapi's `tool-calls` server message and its answer. The message lists the model's calls in
// `toolCallList` (`{id, type: 'function', function: {name, arguments}}`, arguments an object or its JSON
// text) and again, each with its tool, in `toolWithToolCallList` (`{…tool, toolCall}`); Vapi's own
// examples also show a flat `{id, name, arguments | parameters}`, read here as well. The answer is
// `{results: [{name, toolCallId, result | error}]}`: both texts go into the conversation's history.

export interface VapiToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface VapiToolCallResult {
  name: string;
  toolCallId: string;
  result?: string;
  error?: string;
}

type Raw = {
  id?: unknown;
  name?: unknown;
  arguments?: unknown;
  parameters?: unknown;
  function?: { name?: unknown; arguments?: unknown; parameters?: unknown } | null;
};

function argumentsOf(value: unknown): Record<string, unknown> {
  if (typeof value === 'string') {
    try {
      return argumentsOf(JSON.parse(value));
    } catch {
      return {};
    }
  }
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function callOf(raw: Raw | null | undefined): VapiToolCall | null {
  if (!raw || typeof raw.id !== 'string') return null;
  const name = raw.function?.name ?? raw.name;
  if (typeof name !== 'string' || !name) return null;
  return {
    id: raw.id,
    name,
    arguments: argumentsOf(raw.function?.arguments ?? raw.function?.parameters ?? raw.arguments ?? raw.parameters),
  };
}

/** The calls a `tool-calls` message asks for, each once (by id), in the order Vapi listed them. */
export function vapiToolCallsOf(message: { toolCallList?: unknown; toolWithToolCallList?: unknown }): VapiToolCall[] {
  const listed = Array.isArray(message.toolCallList) ? (message.toolCallList as Raw[]) : [];
  const withTools = Array.isArray(message.toolWithToolCallList)
    ? (message.toolWithToolCallList as { toolCall?: Raw }[]).map((t) => t?.toolCall)
    : [];
  const calls = new Map<string, VapiToolCall>();
  for (const raw of [...listed, ...withTools]) {
    const call = callOf(raw);
    if (call && !calls.has(call.id)) calls.set(call.id, call);
  }
  return [...calls.values()];
}
