import type { AgentConfig } from '../../../domain/agent-config';
import { voiceTools, type VoiceTool } from '../../../domain/voice-tools';

// The version's tools as Vapi tools (model.tools), from the same list the voice engine offers its model
// (domain voiceTools): a webhook or a knowledge-base search is a `function` tool whose `server` is the
// service itself, so Vapi's `tool-calls` message comes back here and is run as the engine runs it; the
// transfer tools and rules are one `transferCall` (Vapi's tool has no name of its own) whose destinations
// carry each description and message; an end-call tool is Vapi's `endCall`.

export interface VapiToolServer {
  /** Where Vapi sends `tool-calls` (the service's tool-calls path, naming the account). */
  url: string;
  /** Sent back as the `x-vapi-secret` header. */
  secret: string;
}

/** How long Vapi waits for a knowledge-base answer (its default for a server is 20 s). */
const KNOWLEDGE_TIMEOUT_SECONDS = 20;
/** Beyond a webhook's own timeout, what the service needs to answer Vapi. */
const ANSWER_MARGIN_SECONDS = 5;

/** A JSON Schema of arguments as Vapi's function parameters take it: an object with properties. */
function parametersOf(schema: Record<string, unknown>): Record<string, unknown> {
  return { ...schema, type: 'object', properties: (schema.properties as Record<string, unknown> | undefined) ?? {} };
}

const startMessage = (content: string | null | undefined) => (content ? { messages: [{ type: 'request-start', content }] } : {});

function functionTool(tool: VoiceTool, server: VapiToolServer, timeoutSeconds: number): Record<string, unknown> {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: parametersOf(tool.parameters) },
    server: { url: server.url, headers: { 'x-vapi-secret': server.secret }, timeoutSeconds },
    ...startMessage(tool.speakWhileWaiting),
  };
}

type Transfer = Extract<VoiceTool, { kind: 'transfer' }>;

/** `ruleMessages`: for the transfer the rules make, what each rule says to the caller before its transfer. */
function transferCall(tools: Transfer[], ruleMessages: Map<string, string> | null): Record<string, unknown> | null {
  const destinations: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const t of tools)
    for (const d of t.destinations) {
      const target = d.phone_number ?? d.sip_uri!;
      if (seen.has(target)) continue;
      seen.add(target);
      const message = t.name === 'transfer_call' && ruleMessages ? ruleMessages.get(d.phone_number ?? '') : t.message;
      destinations.push({
        ...(d.phone_number ? { type: 'number', number: d.phone_number } : { type: 'sip', sipUri: d.sip_uri }),
        description: d.description ?? t.description,
        ...(message ? { message } : {}),
        // A warm transfer tells the person taking the call what it was about before joining them.
        ...(t.mode === 'warm' ? { transferPlan: { mode: 'warm-transfer-say-summary' } } : {}),
      });
    }
  return destinations.length ? { type: 'transferCall', destinations } : null;
}

/** `server`: where function tools are answered (null: none is, and they are left out). */
export function vapiTools(config: AgentConfig, server: VapiToolServer | null): Record<string, unknown>[] {
  const tools = voiceTools(config);
  const out: Record<string, unknown>[] = [];
  if (server)
    for (const t of tools) {
      if (t.kind === 'webhook') out.push(functionTool(t, server, t.tool.timeout_seconds + ANSWER_MARGIN_SECONDS));
      if (t.kind === 'knowledge_base') out.push(functionTool(t, server, KNOWLEDGE_TIMEOUT_SECONDS));
    }
  // The rules' transfer is the `transfer_call` the version's own tools do not name.
  const rules = config.transfer.enabled && !config.tools.some((t) => t.name === 'transfer_call');
  const ruleMessages = rules
    ? new Map(config.transfer.rules.flatMap((r) => (r.message ? [[r.destination, r.message] as const] : [])))
    : null;
  const transfer = transferCall(
    tools.filter((t): t is Transfer => t.kind === 'transfer'),
    ruleMessages,
  );
  if (transfer) out.push(transfer);
  const end = tools.find((t) => t.kind === 'end_call');
  if (end) out.push({ type: 'endCall', ...startMessage(end.kind === 'end_call' ? end.message : null) });
  return out;
}
