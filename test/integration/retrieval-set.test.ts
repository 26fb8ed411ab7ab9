import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkExactSet, foldText, loadExactSet, type ExactSet } from '../../bench/retrieval-exact-set';
import { articleText, checkJudgedSet, loadJudgedSet, type JudgedSet } from '../../bench/retrieval-set';
import type { Sql } from '../../db/client';
import { createTestDatabase } from '../support/database';

// The judged retrieval set keeps its rules (checked with Postgres's English parser and stemmer, the
// ones full text uses), and the check catches a question that breaks them; so does the exact-term set.

let sql: postgres.Sql;
beforeAll(async () => {
  sql = postgres((await createTestDatabase()).url, { max: 1, onnotice: () => {} });
});
afterAll(async () => sql?.end());

describe('bench/retrieval/help-centre.json', () => {
  it('has 60 articles, 45 questions, 15 of each kind, and breaks no rule', async () => {
    const set = loadJudgedSet();
    expect(set.licence).toBe('CC0-1.0');
    expect(await checkJudgedSet(sql as unknown as Sql, set)).toEqual([]);
  });

  it('reports a paraphrase sharing a stemmed word with its article, and a token found in another article', async () => {
    const set = loadJudgedSet();
    const broken: JudgedSet = {
      ...set,
      questions: set.questions.map((q) =>
        q.id === 's06' ? { ...q, text: 'I forgot the password' } : q.id === 'l01' ? { ...q, text: 'What does KH- mean?', token: 'KH-' } : q,
      ),
    };
    const problems = await checkJudgedSet(sql as unknown as Sql, broken);
    expect(problems).toContainEqual(expect.stringMatching(/^s06: shares forgot, password with password$/));
    expect(problems).toContainEqual(expect.stringMatching(/^l01: token KH- is in .*, not only in its answer$/));
  });
});

describe('bench/retrieval/exact-terms.json', () => {
  it('has 40 articles, 60 questions, 10 of each kind with 4 in each half, and breaks no rule', () => {
    const set = loadExactSet();
    expect(set.licence).toBe('CC0-1.0');
    expect(checkExactSet(set)).toEqual([]);
  });

  it('reports a term another article holds, a variant written as the answer writes it, and a phrase not quoted', () => {
    const set = loadExactSet();
    const broken: ExactSet = {
      ...set,
      questions: set.questions.map((q) =>
        q.id === 'c01'
          ? { ...q, text: 'What comes with SKU-44?', term: 'SKU-44' }
          : q.id === 'v01'
            ? { ...q, text: 'SKU-4472 battery', term: 'SKU-4472' }
            : q.id === 'p01'
              ? { ...q, text: 'Who pays under delivered duty paid?' }
              : q,
      ),
    };
    const problems = checkExactSet(broken);
    expect(problems).toContain('c01: term SKU-44 is in no article, not only in its answer');
    expect(problems).toContain('v01: a code-variant question writes its term as the answer does');
    expect(problems).toContain('p01: a phrase question quotes its term');
  });

  it("folds text as the database's kb_fold does (the set's rules and the ranking agree)", async () => {
    const set = loadExactSet();
    const texts = [...set.articles.map(articleText), ...set.questions.map((q) => q.term), 'ŁÓDŹ Straße ÆØ ﬁle Ｗ－９ Жук 2ºC'];
    const rows = await sql<
      { folded: string }[]
    >`SELECT kb_fold(t) AS folded FROM unnest(${texts}::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n`;
    expect(rows.map((r) => r.folded)).toEqual(texts.map(foldText));
  });
});
