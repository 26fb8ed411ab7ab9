import { accountsNamed, contactsNamed, dealsNamed, dealsOfAccountNamed, type NamedRecord } from '../../db/chat-lookups';
import type { TranscriptMessage } from '../../domain/ai-chat';
import { type ChatIntent, type Target, parseChatIntent } from '../../domain/semantic-layer/chat-intents';
import type { ChatEvent } from '../../platform/adapters/llm/chat-model';
import type { Embedder } from '../../platform/adapters/embedders/embedder';
import { orgIndex, understandQuestion } from '../assistants/understanding';
import type { ServiceDeps } from '../deps';
import { composeChatAnswer } from './compose';
import { CONTACT_FIELDS, DEAL_FIELDS } from './search-plans';

type Deps = Pick<ServiceDeps, 'sql'>;

const LIST_FIELDS: Record<string, string[]> = { contacts: CONTACT_FIELDS, deals: DEAL_FIELDS };

/**
 * A step of the chat without a large model, as events like a model's. The first step reads the message:
 * a change to one named record becomes the matching proposal tool call (exactly the fields named), a
 * record's summary its get_* call, any other read an analytics plan run by query_crm; an ambiguous name
 * is asked about and anything else gets a sentence saying what the chat can do. Later steps answer from
 * the tool outputs of this turn (names and numbers as stored).
 */
export async function* intentStep(
  deps: Deps,
  input: { orgId: string; message: string; step: number; transcript: TranscriptMessage[]; embedder?: Embedder },
): AsyncIterable<ChatEvent> {
  if (input.step > 0) {
    yield { type: 'text-delta', delta: composeChatAnswer(input.transcript) };
    yield { type: 'finish', reason: 'stop' };
    return;
  }
  const call = await decideFirstStep(deps, input.orgId, input.message, { embedder: input.embedder });
  if (typeof call === 'string') {
    yield { type: 'text-delta', delta: call };
    yield { type: 'finish', reason: 'stop' };
    return;
  }
  yield { type: 'tool-call', call: { id: 'intent', name: call.name, input: call.input } };
  yield { type: 'finish', reason: 'tool-calls' };
}

/** The first step's decision alone: the tool call it makes, or the sentence it answers with (benchmarks, tests). */
export async function decideFirstStep(deps: Deps, orgId: string, message: string, options: { today?: Date; embedder?: Embedder } = {}) {
  const { index } = await orgIndex(deps, orgId);
  const intent = parseChatIntent(message, { index, today: options.today ?? new Date(new Date().toISOString().slice(0, 10)) });
  return callFor(deps, { orgId, message, embedder: options.embedder }, intent);
}

async function callFor(
  deps: Deps,
  input: { orgId: string; message: string; embedder?: Embedder },
  intent: ChatIntent,
): Promise<{ name: string; input: unknown } | string> {
  switch (intent.kind) {
    case 'refuse':
    case 'clarify':
      return intent.text;
    case 'summary': {
      const record = await resolve(deps, input.orgId, intent.target);
      if (typeof record === 'string') return record;
      const key = { accounts: 'account_id', deals: 'deal_id', contacts: 'contact_id' }[intent.target.entity];
      return { name: `get_${intent.target.entity.slice(0, -1)}`, input: { [key]: record.id } };
    }
    case 'write': {
      const record = await resolve(deps, input.orgId, intent.target);
      if (typeof record === 'string') return record;
      switch (intent.tool) {
        case 'update_account':
          return { name: intent.tool, input: { account_id: record.id, changes: intent.changes } };
        case 'update_deal':
          return { name: intent.tool, input: { deal_id: record.id, changes: intent.changes } };
        case 'update_contact':
          return { name: intent.tool, input: { contact_id: record.id, changes: intent.changes } };
        case 'move_deal_stage':
          return { name: intent.tool, input: { deal_id: record.id, stage: intent.stage } };
        case 'create_activity':
          return { name: intent.tool, input: { account_id: record.id, type: intent.type, subject: intent.subject } };
        case 'create_contact':
          return { name: intent.tool, input: { account_id: record.id, ...intent.contact } };
      }
      break;
    }
    case 'read': {
      const understood = await understandQuestion(deps, input.orgId, input.message, { embedder: input.embedder });
      if (understood.kind !== 'plan') return understood.text;
      const plan = understood.plan;
      // A list of contacts or deals shows what tells them apart (title, email; stage, value, account).
      const shown = LIST_FIELDS[plan.entity];
      if (shown && plan.measures.length === 0 && plan.dimensions.length === 0)
        plan.fields = [...new Set([...plan.fields.filter((f) => f !== 'name'), ...shown])];
      return { name: 'query_crm', input: { plan } };
    }
  }
  return 'I could not read this message.';
}

/** The one record a target names, or the question to ask when it names several (or none). */
async function resolve(deps: Deps, orgId: string, target: Target): Promise<NamedRecord | string> {
  const found =
    'ofAccount' in target
      ? await dealsOfAccountNamed(deps.sql, orgId, target.ofAccount)
      : target.entity === 'accounts'
        ? await accountsNamed(deps.sql, orgId, target.name)
        : target.entity === 'deals'
          ? await dealsNamed(deps.sql, orgId, target.name)
          : await contactsNamed(deps.sql, orgId, target.name);
  if (found.length === 1) return found[0]!;
  const what = 'ofAccount' in target ? `deal of ${target.ofAccount}` : target.entity.slice(0, -1);
  if (found.length === 0) return `I found no ${what} by that name.`;
  return `There is more than one ${what}: ${found.map((r) => r.name).join(', ')}. Which one do you mean?`;
}
