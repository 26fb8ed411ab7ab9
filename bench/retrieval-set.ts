import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from '../db/client';

// The judged retrieval set under bench/retrieval/ (a fictional help centre, CC0): loading, and the
// rules each question kind must keep, checked with Postgres's own English parser and stemmer (the one
// the full-text ranking uses).

export const QUESTION_KINDS = ['lexical', 'semantic', 'mixed'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

export interface Article {
  id: string;
  title: string;
  text: string;
}
export interface Question {
  id: string;
  kind: QuestionKind;
  text: string;
  answers: string[];
  /** lexical only: the rare token the question hinges on. */
  token?: string;
}
export interface JudgedSet {
  name: string;
  licence: string;
  articles: Article[];
  questions: Question[];
}

export const JUDGED_SET_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'retrieval', 'help-centre.json');

export function loadJudgedSet(file = JUDGED_SET_FILE): JudgedSet {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as JudgedSet;
}

/** An article as it is ingested: a Markdown heading, then the body. */
export const articleText = (a: Article) => `# ${a.title}\n\n${a.text}`;

/**
 * What is wrong with the set, one line each (empty: nothing). Sizes: 60 articles, 45 questions, 15
 * of each kind at least. Every answer names an article. A lexical question's token appears in its
 * answer and in no other article. A semantic question shares no lexeme with its answer (English
 * stemming, stop words dropped: `to_tsvector('english', …)`).
 */
export async function checkJudgedSet(sql: Sql, set: JudgedSet): Promise<string[]> {
  const problems: string[] = [];
  const byId = new Map(set.articles.map((a) => [a.id, a]));
  if (byId.size !== set.articles.length) problems.push('article ids are not unique');
  if (set.articles.length < 60) problems.push(`${set.articles.length} articles, fewer than 60`);
  if (set.questions.length < 45) problems.push(`${set.questions.length} questions, fewer than 45`);
  for (const kind of QUESTION_KINDS) {
    const n = set.questions.filter((q) => q.kind === kind).length;
    if (n < 15) problems.push(`${n} ${kind} questions, fewer than 15`);
  }
  for (const q of set.questions) {
    if (!QUESTION_KINDS.includes(q.kind)) problems.push(`${q.id}: unknown kind ${q.kind}`);
    if (q.answers.length === 0 || q.answers.some((a) => !byId.has(a))) problems.push(`${q.id}: an answer names no article`);
    if (q.kind === 'lexical') {
      const token = q.token?.toLowerCase();
      if (!token || !q.text.toLowerCase().includes(token)) {
        problems.push(`${q.id}: a lexical question names its token, and holds it`);
        continue;
      }
      const holders = set.articles.filter((a) => articleText(a).toLowerCase().includes(token)).map((a) => a.id);
      if (holders.length !== 1 || !q.answers.includes(holders[0]!))
        problems.push(`${q.id}: token ${q.token} is in ${holders.join(', ') || 'no article'}, not only in its answer`);
    }
    if (q.kind === 'semantic') {
      for (const answer of q.answers) {
        const [row] = await sql<{ shared: string[] }[]>`
          SELECT array(
            SELECT unnest(tsvector_to_array(to_tsvector('english', ${q.text})))
            INTERSECT SELECT unnest(tsvector_to_array(to_tsvector('english', ${articleText(byId.get(answer)!)})))
            ORDER BY 1) AS shared`;
        if (row!.shared.length > 0) problems.push(`${q.id}: shares ${row!.shared.join(', ')} with ${answer}`);
      }
    }
  }
  return problems;
}
