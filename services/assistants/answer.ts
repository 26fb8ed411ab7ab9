import type { AssistantTranscript } from '../../domain/analytics-assistant';
import { describeFilters } from '../../domain/semantic-layer/describe';
import type { Plan } from '../../domain/semantic-layer/plan';

/**
 * The answer in words, composed from the plan and its result (names and numbers exactly as the
 * database returned them): one sentence for one value, a short list for a few rows, the count and the
 * first rows for many (the table beside the answer holds them all).
 */

export interface ResultPayload {
  columns: string[];
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
}

const SHOWN_ROWS = 15;

/** The run_sql call this turn made and what came back, read from the transcript. */
export function lastResult(transcript: AssistantTranscript): {
  plan: Plan | null;
  read: string[];
  result: ResultPayload | null;
  error: string | null;
} {
  const call = [...transcript].reverse().find((m) => m.role === 'assistant' && m.toolCalls?.length);
  const input = (call && call.role === 'assistant' ? call.toolCalls![0]!.input : null) as { plan?: Plan; read?: string[] } | null;
  const output = [...transcript].reverse().find((m) => m.role === 'tool');
  let result: ResultPayload | null = null;
  let error: string | null = null;
  if (output && output.role === 'tool') {
    const json = output.content.split('\n').find((line) => line.startsWith('{'));
    const parsed = json ? (JSON.parse(json) as Partial<ResultPayload> & { error?: string }) : null;
    if (parsed?.error) error = parsed.error;
    else if (parsed?.columns) result = parsed as ResultPayload;
  }
  return { plan: input?.plan ?? null, read: input?.read ?? [], result, error };
}

const label = (column: string) => column.replace(/_/g, ' ');
/** A value as stored; a date column arrives as midnight UTC and is shown as its date. */
const show = (value: unknown) =>
  value === null || value === undefined
    ? '(none)'
    : typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/.test(value)
      ? value.slice(0, 10)
      : String(value);
/** A rate also as a percentage with two decimals (0.5556 → 55.56 %). */
const showIn = (column: string, value: unknown) =>
  column.endsWith('_rate') && value !== null && value !== undefined
    ? `${show(value)} (${(Number(value) * 100).toFixed(2)} %)`
    : show(value);

/** What the plan counted or listed, in words: "deals (stage = negotiation)"; its conditions when nothing was read aloud. */
function subject(plan: Plan, read: string[]): string {
  const what = plan.entity.replace(/_/g, ' ');
  const said = read.length ? read : describeFilters(plan);
  return said.length ? `${what} (${said.join('; ')})` : what;
}

export function composeAnswer(plan: Plan, read: string[], result: ResultPayload): string {
  const about = subject(plan, read);
  // Nothing found is an answer: the conditions that found nothing are said, so a value the organization lacks shows.
  if (result.rows.length === 0) return `No ${about} match.`;
  const { columns, rows } = result;
  if (rows.length === 1 && columns.length === 1) return `${capital(label(columns[0]!))} of ${about}: ${showIn(columns[0]!, rows[0]![0])}.`;
  const line = (row: unknown[]) =>
    columns.length === 1 ? showIn(columns[0]!, row[0]) : columns.map((c, i) => `${label(c)} ${showIn(c, row[i])}`).join(', ');
  const listed = rows.slice(0, SHOWN_ROWS).map((row) => `- ${line(row)}`);
  const more =
    rows.length > SHOWN_ROWS || result.truncated
      ? `\n… ${result.truncated ? 'more rows' : `${rows.length - SHOWN_ROWS} more`} in the table.`
      : '';
  const count = result.truncated ? `at least ${rows.length}` : String(rows.length);
  return `${capital(about)}: ${count} row${rows.length === 1 ? '' : 's'}.\n${listed.join('\n')}${more}`;
}

const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
