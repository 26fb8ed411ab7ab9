import type { TranscriptMessage } from '../../domain/ai-chat';
import type { Plan } from '../../domain/semantic-layer/plan';
import { composeAnswer, type ResultPayload } from '../assistants/answer';

/**
 * The chat's answer from this turn's last tool output, in words: rows as a list, a record's summary,
 * a committed change, or what went wrong. Values are quoted as the tool returned them.
 */
export function composeChatAnswer(transcript: TranscriptMessage[]): string {
  const call = [...transcript].reverse().find((m) => m.role === 'assistant' && m.toolCalls?.length);
  const tool = call?.role === 'assistant' ? call.toolCalls![0]! : null;
  const output = [...transcript].reverse().find((m) => m.role === 'tool');
  if (!tool || !output || output.role !== 'tool') return 'I have nothing to report for this message.';
  const data = outputOf(output.content) as Output | null;
  if (!data) return 'The tool gave no answer.';
  if (typeof data.error === 'string') return `That did not work: ${data.error}`;
  if (data.status === 'denied' || data.status === 'expired') return 'Nothing was changed.';
  switch (tool.name) {
    case 'query_crm':
      return composeAnswer((tool.input as { plan: Plan }).plan, [], data as ResultPayload);
    case 'search_contacts':
    case 'search_deals':
      return composeAnswer(
        { entity: tool.name.slice(7), measures: [], dimensions: [], fields: [], filters: [], having: [], order: [] },
        [],
        data as ResultPayload,
      );
    case 'get_account':
      return accountSummary(data);
    case 'get_deal':
      return `${data.deal!.name}: stage ${data.deal!.stage}, value ${data.deal!.value ?? '(none)'} ${data.deal!.currency ?? ''}, close date ${data.deal!.close_date ?? '(none)'}.`;
    case 'get_contact': {
      const c = data.contact!;
      return `${[c.first_name, c.last_name].filter(Boolean).join(' ')}: ${c.title ?? 'no title'}, ${c.email ?? 'no email'}, stage ${c.stage}.`;
    }
    default:
      return committed(tool.name, data);
  }
}

function accountSummary(data: Output): string {
  const a = data.account!;
  const facts = [
    a.industry && `industry ${a.industry}`,
    a.owner_id && `owner ${a.owner_id}`,
    a.employee_count != null && `${a.employee_count} employees`,
    a.domain,
  ]
    .filter(Boolean)
    .join(', ');
  const people = (data.contacts ?? []).map(
    (c) => `${[c.first_name, c.last_name].filter(Boolean).join(' ')}${c.title ? ` (${c.title})` : ''}`,
  );
  const deals = (data.deals ?? data.open_deals ?? []).map((d) =>
    `${d.name} (${d.stage}, ${d.value ?? '-'} ${d.currency ?? ''})`.replace(' )', ')'),
  );
  const recent = (data.recent_activities ?? []).slice(0, 3).map((x) => `${x.type}: ${x.summary}`);
  return [
    `${a.name}${facts ? ` — ${facts}` : ''}.`,
    `Contacts: ${people.length ? people.join(', ') : 'none'}.`,
    `Deals: ${deals.length ? deals.join(', ') : 'none'}.`,
    ...(recent.length ? [`Recent activity: ${recent.join('; ')}.`] : []),
  ].join('\n');
}

function committed(tool: string, data: Output): string {
  if (data.deal && tool === 'move_deal_stage') return `Done: ${data.deal.name} is now in ${data.deal.stage}.`;
  if (data.deal) return `Done: ${data.deal.name} was updated.`;
  if (data.account) return `Done: ${data.account.name} was updated.`;
  if (data.contact && tool === 'create_contact')
    return `Done: ${[data.contact.first_name, data.contact.last_name].filter(Boolean).join(' ') || data.contact.email} was added.`;
  if (data.contact) return `Done: ${[data.contact.first_name, data.contact.last_name].filter(Boolean).join(' ')} was updated.`;
  if (data.activity) return `Done: the ${data.activity.type} "${data.activity.summary}" was logged.`;
  return 'Done.';
}

interface Person {
  first_name?: string | null;
  last_name?: string | null;
  title?: string | null;
  email?: string | null;
  stage?: string;
}
interface DealOut {
  name: string;
  stage: string;
  value?: number | string | null;
  currency?: string | null;
  close_date?: string | null;
}
/** The tool outputs the answer reads (each tool fills some of these). */
interface Output {
  error?: string;
  status?: string;
  account?: { name: string; industry?: string | null; owner_id?: string | null; employee_count?: number | null; domain?: string | null };
  contacts?: Person[];
  deals?: DealOut[];
  open_deals?: DealOut[];
  recent_activities?: { type: string; summary: string }[];
  deal?: DealOut;
  contact?: Person;
  activity?: { type: string; summary: string };
}

/** The JSON inside a tool output's untrusted-data marker. */
function outputOf(content: string): unknown {
  const json = content.split('\n').find((line) => line.startsWith('{') || line.startsWith('['));
  try {
    return json ? JSON.parse(json) : null;
  } catch {
    return null;
  }
}
