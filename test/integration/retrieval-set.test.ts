import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkJudgedSet, loadJudgedSet, type JudgedSet } from '../../bench/retrieval-set';
import type { Sql } from '../../db/client';
import { createTestDatabase } from '../support/database';

// The judged retrieval set keeps its rules (checked with Postgres's English parser and stemmer, the
// ones full text uses), and the check catches a question that breaks them.

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
