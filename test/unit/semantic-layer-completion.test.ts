import { describe, expect, it } from 'vitest';
import { catalogOf } from '../../domain/semantic-layer/catalog';
import { fieldOptions, unreadPhrases, withPhrasesRead } from '../../domain/semantic-layer/completion';
import { parseQuestion } from '../../domain/semantic-layer/parser';
import { type ValueEntry, ValueIndex } from '../../domain/semantic-layer/values';
import { STOP_WORDS, knownValues, valueAliases } from '../../domain/semantic-layer/vocabulary';

// What a completer may be asked when the rules leave words unread: phrases that can only name a field,
// the fields of the question's subject, and the question said again with the field's words.

const catalog = catalogOf([]);
const values: ValueEntry[] = ['Acme', 'Hooli'].map((value) => ({ entity: 'accounts', field: 'name', value }));
const index = new ValueIndex(values, STOP_WORDS, [...valueAliases(), ...knownValues(catalog)]);
const refused = (question: string) => {
  const understood = parseQuestion(question, { catalog, index, currencies: ['USD'], today: new Date('2026-03-16T00:00:00Z') });
  if (understood.kind !== 'refuse' || !understood.partial) throw new Error(`${question}: ${understood.kind}`);
  return understood;
};

describe('completing what the rules left unread', () => {
  it('keeps the plan as far as it was read beside the sentence of what was not', () => {
    const r = refused('How many deals did we lose to competitors?');
    expect(r.partial!.plan).toMatchObject({ entity: 'deals', measures: ['count'] });
    expect(unreadPhrases(r.words!)).toEqual([{ text: 'lose to competitors', start: 5, end: 8 }]);
  });

  it('joins adjacent unread words, and words read as nothing between them, into one phrase', () => {
    const readings = ['list', 'deals', 'with', 'their', 'renewal', 'of', 'the', 'quarter'].map((word, i) => ({
      word,
      as: i === 1 ? 'entity deals' : null,
    }));
    expect(unreadPhrases(readings)).toEqual([{ text: 'renewal of the quarter', start: 4, end: 8 }]);
  });

  it('asks nothing when an unread word is logic, a comparison, a place or a number', () => {
    for (const word of ['not', 'without', 'more', 'spain', '2024'])
      expect(
        unreadPhrases([
          { word: 'deals', as: 'entity deals' },
          { word, as: null },
        ]),
        word,
      ).toBeNull();
  });

  it("offers the subject's fields and its joined records' fields, one term each, no ids", () => {
    const options = fieldOptions(catalog, refused('How many deals did we lose to competitors?').partial!.plan);
    const terms = options.map((o) => o.term);
    expect(options).toContainEqual({ term: 'value', path: 'value' });
    expect(options).toContainEqual({ term: 'close date', path: 'close_date' });
    expect(options).toContainEqual({ term: 'account industry', path: 'account.industry' });
    expect(options.some((o) => o.path === 'id' || o.path.endsWith('.id'))).toBe(false);
    expect(new Set(terms).size).toBe(terms.length);
  });

  it('says the question again with the field named, names keeping their capitals', () => {
    const question = 'How many Hooli deals did we lose to competitors?';
    const [phrase] = unreadPhrases(refused(question).words!)!;
    expect(withPhrasesRead(question, [{ phrase: phrase!, option: { term: 'account industry', path: 'account.industry' } }])).toBe(
      'How many Hooli deals did we account industry',
    );
  });
});
