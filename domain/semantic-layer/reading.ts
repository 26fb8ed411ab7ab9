/**
 * The account of a question's words: what each word became in the plan (an entity, a field, a value, a
 * measure, a period, an operator, an ordering), or that it carries nothing. A word that is neither is not
 * understood, and the answer says so instead of answering a broader question than the one asked.
 */

/** One word of the question and what it became; `null` for a word that carries nothing. */
export interface WordReading {
  word: string;
  as: string | null;
}

/**
 * Words that carry nothing in a question about the CRM: articles, pronouns, question words, auxiliaries,
 * politeness, generic verbs of asking and showing, and prepositions (which only join other words).
 * Negations, comparisons, counting and ranking words are not here: they must become part of the plan.
 */
export const NOISE = new Set(
  `a an the this that these those there here it its it's their theirs them they he she his her him hers i me my mine we us our ours you your
  yours who whom whose what which whats what's how when where why whichever whatever
  is are was were be been being am do does did done doing have has had having got get gets getting
  can could would should will shall may might must let lets let's
  please kindly pls thanks thank tell show list give display find see know want need look looking fetch pull bring return print report
  and or but also as so then than just only even still already currently now right moment today's so far yet ever at all any some
  each every both either one ones of in on at to for from with by into onto about within across over under via through per
  crm database data system records record entries entry rows row table tables details detail info information
  exist exists existing there's here's many much lot lots altogether overall total totals in-total whole entire
  name names listed listing named called new our own please up
  together among amongst behind sit sits sitting work works working worked carry carries carrying hold holds holding use uses using
  used matching matched early late onwards onward log logs logged recorded entered placed made whatever regardless irrespective
  priced denominated belong belongs belonging come comes came coming everyone everybody anyone anybody someone fall falls falling
  lie lies land lands single alone received receive meet`.split(/\s+/),
);

/** Which words of a question the plan used, and as what. */
export class WordUse {
  private readonly used = new Map<number, string>();

  constructor(readonly tokens: readonly string[]) {}

  /** Marks the words [start, end) as read into `as` (the first reading of a word stays). */
  use(start: number, end: number, as: string): void {
    for (let i = Math.max(0, start); i < Math.min(end, this.tokens.length); i++) if (!this.used.has(i)) this.used.set(i, as);
  }

  has(i: number): boolean {
    return this.used.has(i);
  }

  /** The words the plan did not use and that carry something: what was not understood. */
  unexplained(): { index: number; word: string }[] {
    return this.tokens.flatMap((word, index) => (this.used.has(index) || carriesNothing(word) ? [] : [{ index, word }]));
  }

  /** Each word with what it became, for the plan frame a person (or a test) reads. */
  readings(): WordReading[] {
    return this.tokens.map((word, i) => ({ word, as: this.used.get(i) ?? null }));
  }
}

/** A word that carries nothing: on the list, or punctuation left alone ("?", "-"). */
export const carriesNothing = (word: string) => NOISE.has(word) || !/[\p{L}\p{N}]/u.test(word);

/** Words that name a place: the CRM records none (no country, city or address). */
export const PLACE_WORDS =
  /\b(country|countries|city|cities|town|towns|region|regions|state|states|province|continent|location|locations|located|based|headquarters|hq|zip|postcode|postal)\b/;

/** Country and city names people ask about most (the CRM has no column for them). */
const PLACES = new Set(
  `spain france germany italy portugal netherlands belgium switzerland austria poland sweden norway denmark finland ireland uk
  britain england scotland wales usa us america canada mexico brazil argentina chile colombia peru japan china india korea singapore
  australia zealand africa nigeria kenya egypt israel turkey greece russia ukraine czechia hungary romania europe asia emea apac latam
  london paris berlin madrid barcelona rome milan amsterdam brussels zurich geneva vienna munich dublin lisbon stockholm oslo
  copenhagen helsinki warsaw prague tokyo beijing shanghai mumbai delhi bangalore sydney melbourne toronto vancouver montreal york
  chicago boston seattle austin denver miami atlanta dallas houston francisco angeles california texas florida`.split(/\s+/),
);

export const isPlace = (word: string) => PLACES.has(word) || PLACE_WORDS.test(word);
