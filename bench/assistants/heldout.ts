import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { closeReaderPools, setDerivedReaderPassword } from '../../db/analytics-assistant';
import { accountsNamed, contactsNamed, dealsNamed } from '../../db/chat-lookups';
import { createSql } from '../../db/client';
import { isWriteTool, untrustedToolOutput } from '../../domain/ai-chat';
import { loadConfig } from '../../platform/core/config';
import { newId } from '../../platform/core/ids';
import { composeChatAnswer } from '../../services/ai-chat/compose';
import { decideFirstStep } from '../../services/ai-chat/intent-step';
import { runRead } from '../../services/ai-chat/tools';
import { attemptQuery } from '../../services/assistants/query-runner';
import { localPlanCompleter } from '../../services/assistants/plan-completer';
import { localTermChooser } from '../../services/assistants/term-chooser';
import { prepareCatalogTerms, understandQuestion } from '../../services/assistants/understanding';
import { answers } from '../analytics/scoring';
import { startAssistantsDatabase } from './database';
import { withDefaultEmbedder } from '../local-embedder';
import { type HeldOutOrg, seedHeldOutOrg } from './heldout-seed';

// `npm run bench -- assistants-heldout [--verbose] [--lexical] [--model] [--complete]`: both assistants on the defaults (no large model) over
// bench/fixtures/assistants-heldout.json, a set kept apart from the golden sets and never tuned on: its own seed of two
// organizations, analytics questions judged by execution, chat messages judged as chat-accuracy judges its tasks.
// Reported per kind of question: the share right and the confident wrong answers (a plan run, or a tool called, whose
// answer is wrong; a question back or a sentence saying what was not understood is wrong but not confident).

interface AnalyticsItem {
  id: string;
  org: string;
  category: string;
  difficulty: string;
  question: string;
  expect: 'answer' | 'clarify' | 'refuse';
  gold?: string;
  also_accept?: string[];
}
interface ChatItem {
  id: string;
  org: string;
  category: string;
  difficulty: string;
  kind: 'read' | 'write' | 'clarify' | 'refuse';
  message: string;
  expect_text?: string[];
  reject_text?: string[];
  expect_proposal?: { tool: string; target: { entity: 'account' | 'contact' | 'deal'; name: string }; input: Record<string, unknown> };
}
interface HeldOut {
  today: string;
  organizations: HeldOutOrg[];
  analytics: AnalyticsItem[];
  chat: ChatItem[];
}

export const HELD_OUT_FILE = path.join(import.meta.dirname, '..', 'fixtures', 'assistants-heldout.json');

interface Outcome {
  set: 'analytics' | 'chat';
  id: string;
  category: string;
  difficulty: string;
  ok: boolean;
  /** Answered with a plan or a tool call (not a question back nor a sentence of what was not understood). */
  confident: boolean;
  said: string;
}

export async function benchAssistantsHeldOut(options: { verbose: boolean; lexical: boolean; model?: boolean; complete?: boolean }) {
  const set = JSON.parse(fs.readFileSync(HELD_OUT_FILE, 'utf8')) as HeldOut;
  const today = new Date(`${set.today}T00:00:00Z`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vcrm-heldout-'));
  fs.chmodSync(dir, 0o755);
  const { pg, databaseUrl } = await startAssistantsDatabase(dir);
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dir, LOG_LEVEL: 'silent', ANALYTICS_DATABASE_URL: '' });
  const sql = createSql(databaseUrl, 5);
  const deps = { sql, config, logger: undefined as never };
  try {
    await setDerivedReaderPassword(sql, config);
    const orgs = new Map<string, string>();
    for (const org of set.organizations) {
      const orgId = newId();
      await sql`INSERT INTO organizations (id, external_id) VALUES (${orgId}, ${`bench-heldout-${org.key}`})`;
      await seedHeldOutOrg(sql, orgId, org);
      orgs.set(org.key, orgId);
    }
    return await withDefaultEmbedder(options.lexical, async (embedder) => {
      for (const orgId of orgs.values()) await prepareCatalogTerms(deps, orgId, embedder);
      // `--model`: near ties of an unknown word go to the local model, as in a running service that has its weights.
      const chooser = options.model ? localTermChooser(config) : undefined;
      // `--complete`: a phrase the rules left unread goes to the local model, which names the field it means.
      const completer = options.complete ? localPlanCompleter({ ...config, ASSISTANT_MODEL_COMPLETION: true }) : undefined;
      if (options.complete && !completer)
        throw new Error('--complete needs the local model (npm run install-tools -- llm) and no LLM_BASE_URL');
      const results: Outcome[] = [];
      for (const item of set.analytics) {
        const orgId = orgs.get(item.org)!;
        let gold: unknown[][] | null = null;
        if (item.gold) {
          const outcome = await attemptQuery(deps, orgId, item.gold);
          if (!outcome.ok) throw new Error(`gold ${item.id} fails: ${outcome.error.detail}`);
          gold = outcome.result.rows;
        }
        const understood = await understandQuestion(deps, orgId, item.question, { today, embedder, chooser, completer });
        let ok = false;
        let said: string;
        if (understood.kind === 'plan') {
          said = understood.compiled.sql.replace(/\s+/g, ' ');
          const outcome = await attemptQuery(deps, orgId, understood.compiled.sql);
          if (!outcome.ok) said += ` → ${outcome.error.detail}`;
          else said += ` → ${JSON.stringify(outcome.result.rows).slice(0, 200)}`;
          ok = item.expect === 'answer' && outcome.ok && gold !== null && answers(outcome.result.rows, gold);
        } else {
          said = `${understood.kind}: ${understood.text.slice(0, 160)}`;
          ok = understood.kind === item.expect || (item.also_accept ?? []).includes(understood.kind);
        }
        results.push({
          set: 'analytics',
          id: item.id,
          category: item.category,
          difficulty: item.difficulty,
          ok,
          confident: understood.kind === 'plan',
          said,
        });
      }
      for (const item of set.chat) {
        const orgId = orgs.get(item.org)!;
        const decided = await decideFirstStep(deps, orgId, item.message, { today, embedder });
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
        const ok = await judgeChat(sql, orgId, item, call, text);
        const said = `${call ? JSON.stringify(call).slice(0, 300) : ''} ${text.slice(0, 300).replace(/\n/g, ' | ')}`;
        results.push({
          set: 'chat',
          id: item.id,
          category: item.category,
          difficulty: item.difficulty,
          ok,
          confident: call !== null,
          said,
        });
      }
      if (options.verbose)
        for (const r of results.filter((x) => !x.ok))
          process.stderr.write(`${r.id} WRONG${r.confident ? ' (confident)' : ''}\n    ${r.said}\n`);
      return {
        embedder: embedder.model,
        chooser: chooser ? 'local model' : 'none',
        completer: completer ? 'local model' : 'none',
        analytics: summary(results.filter((r) => r.set === 'analytics')),
        chat: summary(results.filter((r) => r.set === 'chat')),
      };
    });
  } finally {
    await closeReaderPools();
    await sql.end({ timeout: 5 });
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Accuracy and confident wrong answers overall, per kind and per difficulty; the wrong ones by id. */
function summary(results: Outcome[]) {
  const figures = (rows: Outcome[]) => ({
    asked: rows.length,
    correct_pct: Math.round((1000 * rows.filter((r) => r.ok).length) / Math.max(1, rows.length)) / 10,
    confident_wrong: rows.filter((r) => !r.ok && r.confident).length,
  });
  const by = (key: 'category' | 'difficulty') =>
    Object.fromEntries([...new Set(results.map((r) => r[key]))].map((k) => [k, figures(results.filter((r) => r[key] === k))]));
  return {
    all: figures(results),
    by_kind: by('category'),
    by_difficulty: by('difficulty'),
    wrong: results.filter((r) => !r.ok).map((r) => `${r.id}${r.confident ? '!' : ''}`),
  };
}

const numbersIn = (text: string) => (text.replace(/(\d),(\d{3})/g, '$1$2').match(/-?\d+(?:\.\d+)?/g) ?? []).map(Number);
const mentions = (text: string, expected: string) =>
  /^-?[\d,]+(\.\d+)?$/.test(expected)
    ? numbersIn(text).some((n) => Math.abs(n - Number(expected.replace(/,/g, ''))) < 0.005)
    : text.toLowerCase().includes(expected.toLowerCase());

async function judgeChat(
  sql: Parameters<typeof accountsNamed>[0],
  orgId: string,
  task: ChatItem,
  call: { name: string; input: unknown } | null,
  text: string,
) {
  const proposal = call && isWriteTool(call.name) ? call : null;
  switch (task.kind) {
    case 'read':
      return (
        !proposal &&
        text.trim() !== '' &&
        (task.expect_text ?? []).every((e) => mentions(text, e)) &&
        !(task.reject_text ?? []).some((r) => text.includes(r))
      );
    case 'clarify':
      return !proposal && (task.expect_text ?? []).every((e) => text.includes(e));
    case 'refuse':
      return call === null && text.trim() !== '';
    case 'write': {
      const want = task.expect_proposal!;
      if (!proposal || proposal.name !== want.tool) return false;
      const lookup = { account: accountsNamed, deal: dealsNamed, contact: contactsNamed }[want.target.entity];
      const [record] = await lookup(sql, orgId, want.target.name);
      const idField = `${want.target.entity}_id`;
      const { [idField]: id, ...rest } = proposal.input as Record<string, unknown>;
      return Boolean(record) && id === record!.id && isDeepStrictEqual(rest, want.input);
    }
  }
}
