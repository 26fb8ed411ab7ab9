import type { Mention } from './mentions';

/**
 * Words in the place of a value that the organization has no record of: "deals with Initech", "contacts at
 * Globex", "the title Chief Happiness Officer", "the yachting industry", "tagged strategic", "owned by sophie".
 * Each becomes a filter on the field its place names, which then finds nothing, instead of being dropped
 * (which would answer about every record). A word in no such place stays not understood.
 */

export type Slot =
  /** A company named after with / at / from / for / of, capitalised: an account's name. */
  | { kind: 'account'; value: string; start: number; end: number }
  /** After "named" / "called": the name of the records asked about. */
  | { kind: 'label'; value: string; start: number; end: number }
  /** Beside a word naming a text field ("title", "industry", "tagged"): a value of that field. */
  | { kind: 'field'; mention: Mention; value: string; start: number; end: number }
  /** "owned by X", "does X own": an owner. */
  | { kind: 'owner'; value: string; start: number; end: number };

const ACCOUNT_LEADS = new Set(['with', 'at', 'from', 'for', 'of', 'to']);
const OWNED = new Set(['owned', 'managed', 'handled', 'run', 'covered']);
const LEAD_IN = new Set(['the', 'a', 'an', 'in', 'of', 'as', 'is']);
/** Field words a value follows as a rule ("tagged X", "title X"). */
const VALUE_AFTER = new Set(['tagged', 'labelled', 'labeled', 'tag', 'title', 'titled', 'source', 'department', 'team']);

/**
 * The slots of the words `free` says nothing read. `cased` are the question's words with their capitals;
 * `textFields` the mentions of text fields (a value may stand beside them).
 */
export function valueSlots(
  tokens: readonly string[],
  cased: readonly string[],
  free: (i: number) => boolean,
  textFields: Mention[],
  /** Where a word names the records asked about. */
  entityWords: ReadonlySet<number> = new Set(),
): Slot[] {
  const slots: Slot[] = [];
  const taken = new Set<number>();
  const run = (from: number, capitalised: boolean) => {
    let end = from;
    while (end < tokens.length && end - from < 5 && free(end) && !taken.has(end) && (!capitalised || /^\p{Lu}/u.test(cased[end] ?? '')))
      end++;
    return end;
  };
  const said = (start: number, end: number) => cased.slice(start, end).join(' ');
  const claim = (slot: Slot) => {
    for (let i = slot.start; i < slot.end; i++) taken.add(i);
    slots.push(slot);
  };
  for (let i = 0; i < tokens.length; i++) {
    if (!free(i) || taken.has(i)) continue;
    const before = tokens[i - 1] ?? '';
    if ((before === 'named' || before === 'called') && i > 0) {
      const end = run(i, false);
      claim({ kind: 'label', value: said(i, end), start: i, end });
      continue;
    }
    if (
      (before === 'by' && OWNED.has(tokens[i - 2] ?? '')) ||
      (['does', 'do', 'did'].includes(before) && /^owns?$/.test(tokens[i + 1] ?? ''))
    ) {
      claim({ kind: 'owner', value: tokens[i]!, start: i, end: i + 1 });
      continue;
    }
    const after = textFields.find((m) => m.end === i || (m.end === i - 1 && ['is', 'of', 'as'].includes(before)));
    // After the field's word only when it is plainly a value ("the title Chief Happiness Officer", "tagged strategic"),
    // not another word about the field ("industry segment").
    const plainly =
      after &&
      (/^\p{Lu}/u.test(cased[i] ?? '') || VALUE_AFTER.has(after.word) || ['the', 'a', 'with'].includes(tokens[after.start - 1] ?? ''));
    if (after && plainly) {
      const end = run(i, false);
      claim({ kind: 'field', mention: after, value: said(i, end), start: i, end });
      continue;
    }
    const end = run(i, false);
    const next = textFields.find((m) => m.start === end);
    if (next && (i === 0 || LEAD_IN.has(before) || !free(i - 1))) {
      claim({ kind: 'field', mention: next, value: said(i, end), start: i, end });
      continue;
    }
    if (ACCOUNT_LEADS.has(before) && /^\p{Lu}/u.test(cased[i] ?? '')) {
      const capitalised = run(i, true);
      claim({ kind: 'account', value: said(i, capitalised), start: i, end: capitalised });
      continue;
    }
    // "the Pied Piper opportunities": a capitalised name right before the records' word (two words when it opens the question).
    if (/^\p{Lu}/u.test(cased[i] ?? '')) {
      const capitalised = run(i, true);
      if (entityWords.has(capitalised) && (i > 0 || capitalised - i >= 2))
        claim({ kind: 'account', value: said(i, capitalised), start: i, end: capitalised });
    }
  }
  return slots;
}
