// Turn-taking rules of the voice runtime: pure functions of what the caller said and what the agent is
// doing. Where every runtime's users hurt most (docs: VOICE.md's list): backchannels that stop the agent,
// turns cut while a number or an address is being spelled, a short "yes" dropped.

const normalize = (text: string): string =>
  text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9@.'\s-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

const words = (text: string): string[] =>
  normalize(text)
    .replace(/[.]+$/g, '')
    .split(/[\s-]+/)
    .filter(Boolean);

/** Listening noises: said while the agent speaks, they mean "go on", never "stop". */
const BACKCHANNELS = new Set([
  'uh huh',
  'uh-huh',
  'uhhuh',
  'mhm',
  'mm hmm',
  'mm-hmm',
  'mmhmm',
  'hmm',
  'mm',
  'hm',
  'um',
  'uh',
  'ah',
  'oh',
  'wow',
  'huh',
  'right',
  'okay',
  'ok',
  'ok ok',
  'yeah',
  'yep',
  'yes',
  'sure',
  'i see',
  'got it',
  'alright',
  'all right',
  'cool',
  'nice',
  'great',
  'exactly',
  'true',
  'indeed',
  'ja',
  'oui',
  'si',
  'vale',
  'genau',
  'd accord',
]);

/** A caller's speech while the agent talks that is only a backchannel (or nothing): the agent goes on. */
export function isBackchannel(text: string): boolean {
  const w = words(text);
  if (w.length === 0) return true;
  if (w.length > 3) return false;
  const phrase = w.join(' ');
  if (BACKCHANNELS.has(phrase)) return true;
  // A hum as a recognizer writes it ("Mmhm", "Ememam", "Aha"): vowels, h and m only, one word.
  if (w.length === 1 && /^[aeiouhm]+$/.test(phrase)) return true;
  // "yeah yeah", "right right", "okay okay": repeats of one backchannel.
  return w.every((x) => BACKCHANNELS.has(x)) && new Set(w).size === 1;
}

/** Speech over the agent shorter than this is a listening noise unless it asks the agent to stop. */
export const SHORT_SOUND_MS = 600;
const STOP_WORDS = new Set('stop wait no nope sorry hold hang excuse hello hey actually but what pardon'.split(' '));

/**
 * Speech said over the agent that is no interruption: a backchannel, or a sound too short to be a request
 * that names no stop ("Mm-hmm" written as "In a mom." by the recognizer); "Wait", "No", "Sorry" still stop it.
 */
export function isListeningNoise(text: string, durationMs: number): boolean {
  if (isBackchannel(text)) return true;
  return durationMs < SHORT_SOUND_MS && !words(text).some((w) => STOP_WORDS.has(w));
}

/** Short answers: a turn of their own when the agent is listening, whatever their length. */
const SHORT_ANSWERS = new Set(['yes', 'no', 'yeah', 'yep', 'nope', 'nah', 'sure', 'okay', 'ok', 'correct', 'right', 'wrong', 'maybe']);
/** What closes a short answer without opening anything ("yes, that's it", "okay, no problem", "yes, please"). */
const ANSWER_CLOSERS = new Set(
  "that's that it please thanks thank you exactly absolutely definitely indeed all good fine perfect great problem course".split(' '),
);

/** A yes or a no, alone or closed by a few words that add nothing to answer ("Yes, that's it."), up to four words. */
export const isShortAnswer = (text: string): boolean => {
  const w = words(text).map((x) => x.replace(/[.]+$/, ''));
  return (
    w.length > 0 &&
    w.length <= 4 &&
    w.some((x) => SHORT_ANSWERS.has(x)) &&
    w.every((x) => SHORT_ANSWERS.has(x) || ANSWER_CLOSERS.has(x) || x === 'of')
  );
};

const NUMBER_WORDS = new Set(['zero', 'oh', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'double', 'triple']);
const SPELLING_WORDS = new Set(['at', 'dot', 'dash', 'hyphen', 'underscore', 'slash', 'point']);

/**
 * The caller is spelling something (digits, letters, an e-mail address) and may only be pausing: the
 * end of the turn waits longer. True when the last word is a digit group, a single letter, a number word
 * or a spelling word ("at", "dot"): a recognizer writes "my number is 077" for a first group of digits.
 */
export function isSpelling(text: string): boolean {
  const last = words(text).at(-1);
  if (!last) return false;
  return /^\d[\d.,]*$/.test(last) || /^[a-z]$/.test(last) || NUMBER_WORDS.has(last) || SPELLING_WORDS.has(last) || /@/.test(last);
}

/**
 * Words a finished sentence does not end with: articles, possessives, conjunctions, prepositions, a
 * copula ("my number is"). The audio turn model hears intonation, and a flat "my phone number is" sounds
 * finished to it; the words say otherwise.
 */
const NEVER_LAST = new Set('a an the my your our their his her and or but because if than um uh er'.split(' '));
/** Words that end a question ("what the policy is?", "who is it for?") but not a statement. */
const OPEN_UNLESS_ASKED = new Set(
  'its this these those so to of for with from about into at in on by is are was were am be like'.split(' '),
);

/** What a caller names before spelling it out: the turn that mentions one waits as long as spelling does. */
const SPELLED_THINGS =
  /\b(number|phone|mobile|cell|e ?mail|address|id|code|zip|postcode|postal|reference|account|card|licen[cs]e|plate|spell\w*|name is)\b/;
/** "my member id is", "the e-mail was": the value follows, however the recognizer writes it ("dd", "Wani"). */
const SPELLED_LEAD_IN =
  /\b(number|phone|mobile|cell|e ?mail|address|id|code|zip|postcode|reference|account|card|licen[cs]e|plate)( number)? (is|was|are|s)\b/;

/**
 * A short turn that starts by naming one ("My email list." for "My email is"): the recognizer lost the
 * lead-in's last word, and what the caller names comes next.
 */
const SHORT_LEAD_IN =
  /^(my|our|his|her|the) ((member|account|phone|email|e mail|zip|postal) )?(number|phone|mobile|cell|e ?mail|address|id|code|zip|postcode|reference)\b/;

/** A single letter group as recognizers write a spelled word: "j o h n", "J-O-H-N", "D.D.". */
const SPELLED_GROUP = /^(?:[a-z0-9](?:[.-]|$)){2,}$|^\d[\d.,]*$/;

/** The caller's words stop where a sentence cannot ("I'd like to", "my number is", a trailing "..."). */
export function endsOpen(text: string): boolean {
  if (/(\.\.\.|…)\s*$/.test(text.trim())) return true;
  const last = words(text).at(-1);
  if (last === undefined) return false;
  return NEVER_LAST.has(last) || (OPEN_UNLESS_ASKED.has(last) && !/\?\s*$/.test(text));
}

/**
 * The caller is giving something to be spelled: a spelled group anywhere in a turn that names a number,
 * an address or a code, or a turn ending on such a name's lead-in ("my e-mail is"). The recognizer
 * writes the last group as a word ("s m i t h" as "SMITH"), so the whole turn counts, not its last word.
 */
export function isGivingSpelled(text: string): boolean {
  const n = normalize(text);
  if (SPELLED_LEAD_IN.test(n.replace(/'/g, ' '))) return true;
  if (!SPELLED_THINGS.test(n)) return false;
  const said = n.split(/\s+/);
  if (said.length <= 3 && SHORT_LEAD_IN.test(n)) return true;
  const letters = said.filter((w) => /^[a-z]$/.test(w)).length;
  return endsOpen(text) || letters >= 3 || said.some((w) => SPELLED_GROUP.test(w.replace(/[.]+$/, '') || w));
}

const MONTHS = 'january february march april may june july august september october november december'.split(' ');
const DIGIT_OF: Record<string, string> = {
  oh: '0',
  ...Object.fromEntries(['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'].map((w, i) => [w, String(i)])),
};
const UNITS = '(one|two|three|four|five|six|seven|eight|nine)';
const TEENS = '(ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)';
const TENS = `((twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)( ${UNITS})?)`;
/** A year as said, at the end: "two thousand (and) seventeen", "nineteen ninety two", "twenty twenty", "nineteen oh five". */
const SAID_YEAR = new RegExp(`\\b(two thousand( and)? (${UNITS}|${TEENS}|${TENS})|(nineteen|twenty) (${TEENS}|${TENS}|oh ${UNITS}))$`);
/** Top-level domains an e-mail address is heard ending with ("dot com"). */
const TLDS = new Set('com org net edu gov io co uk us ca de fr es it nl au ie info biz me ai app dev'.split(' '));

/** The digits said in `w`, as written ("415", "0192") or as words ("four one five", "double five"). */
function saidDigits(w: readonly string[]): string {
  let digits = '';
  for (let i = 0; i < w.length; i++) {
    const word = w[i]!;
    const repeat = word === 'double' ? 2 : word === 'triple' ? 3 : 1;
    const next = repeat > 1 ? w[i + 1] : word;
    const digit = next === undefined ? undefined : (DIGIT_OF[next] ?? (/^\d+$/.test(next) ? next : undefined));
    if (digit === undefined) continue;
    digits += repeat > 1 ? digit.repeat(repeat) : digit;
    if (repeat > 1) i++;
  }
  return digits;
}

/**
 * The spelled value is whole, so nothing more is coming: an e-mail address up to its top-level domain
 * ("... at example dot com"), a phone number of a North American number's ten digits (eleven after a 1), a
 * date down to its year ("March fourteenth two thousand seventeen"), a name spelled after it is said
 * ("Emma, E M M A"). Such a turn is answered as any complete turn is, not after spelling's long wait; a
 * member id or a code has no such shape and keeps the wait.
 */
export function isWholeSpelledValue(text: string): boolean {
  const n = normalize(text);
  const w = words(text);
  const last = w.at(-1) ?? '';
  // "john.smith@example.com", "... at example dot com", "... at example.com"
  if (/@[a-z0-9-]+(\.[a-z0-9-]+)*\.([a-z]{2,})$/.test(last) && TLDS.has(last.split('.').at(-1)!)) return true;
  const domain = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.([a-z]{2,})$/.exec(last);
  if (w.includes('at') && ((w.at(-2) === 'dot' && TLDS.has(last)) || (domain && TLDS.has(domain[2]!)))) return true;
  if (/\b(phone|mobile|cell|number)\b/.test(n)) {
    const digits = saidDigits(w.slice(w.findIndex((x) => /^(phone|mobile|cell|number)$/.test(x)) + 1));
    if ((digits.length === 10 && /^[2-9]/.test(digits)) || (digits.length === 11 && digits.startsWith('1'))) return true;
  }
  // A date ending on its year: "2017", "two thousand seventeen", "nineteen ninety".
  const month = w.findIndex((x) => MONTHS.includes(x));
  if (month >= 0 && w.length - month >= 3) {
    if (/^(19|20)\d\d$/.test(last) || SAID_YEAR.test(w.slice(-5).join(' '))) return true;
  }
  // Letters spelling a word said before them.
  const letters: string[] = [];
  for (let i = w.length - 1; i >= 0 && /^[a-z]$/.test(w[i]!); i--) letters.unshift(w[i]!);
  const spelled = letters.length >= 2 ? letters.join('') : /^[a-z](\.[a-z])+\.?$/.test(last) ? last.replace(/\./g, '') : '';
  return spelled.length >= 2 && w.slice(0, w.length - Math.max(letters.length, 1)).includes(spelled);
}

export interface TurnWaitRules {
  /** After a turn model's "complete" (or a short answer): answer now. */
  completeMs: number;
  /** The turn model says the caller is not done: wait this long for more speech. */
  incompleteMs: number;
  /** The caller is spelling: wait this long. */
  spellingMs: number;
}

export const DEFAULT_TURN_WAIT: TurnWaitRules = { completeMs: 0, incompleteMs: 900, spellingMs: 1800 };

/** How much longer than the caller's own longest pause of the turn the silence after a spelled group may last. */
const PAUSE_MARGIN = 1.5;

/** The caller's pauses within a turn: the longest so far, and the silence since their last sound. */
export interface CallerPauses {
  longestPauseMs: number | null;
  silenceMs: number;
}

/**
 * The wait while the caller spells: the whole spelling wait until the caller has paused within this turn;
 * then what is left of half as long again as their longest pause, counted from their last sound (a caller
 * who pauses 0.6 s between groups is not kept waiting 1.8 s after the last), never under the
 * unfinished-turn wait nor over the spelling one.
 */
export function spellingWaitMs(pauses: CallerPauses | null, rules = DEFAULT_TURN_WAIT): number {
  if (pauses?.longestPauseMs == null) return rules.spellingMs;
  const left = pauses.longestPauseMs * PAUSE_MARGIN - pauses.silenceMs;
  return Math.round(Math.min(rules.spellingMs, Math.max(rules.incompleteMs, left)));
}

/**
 * How long to wait, after the caller stopped, before answering: nothing when the turn is complete or a
 * short answer, longer while spelling (by the caller's own `pauses`), a bounded wait when the turn model
 * hears an unfinished turn.
 */
export function turnWaitMs(
  transcript: string,
  verdict: { complete: boolean } | null,
  rules = DEFAULT_TURN_WAIT,
  pauses: CallerPauses | null = null,
): number {
  if (isSpelling(transcript) || isGivingSpelled(transcript))
    return isWholeSpelledValue(transcript) ? rules.completeMs : spellingWaitMs(pauses, rules);
  if (isShortAnswer(transcript)) return rules.completeMs;
  if (endsOpen(transcript)) return rules.incompleteMs;
  // A question the recognizer punctuated as one is asked: the turn model's doubt (it hears intonation,
  // and a flat voice asks without rising) does not hold it back.
  if (verdict && !verdict.complete && !/\?\s*$/.test(transcript)) return rules.incompleteMs;
  return rules.completeMs;
}

/** Whether the caller's words end the call by the agent's end-call phrases ("goodbye"). */
export function saysEndPhrase(text: string, phrases: readonly string[]): boolean {
  const said = ` ${words(text).join(' ')} `;
  return phrases.some((p) => {
    const phrase = words(p).join(' ');
    return phrase.length > 0 && said.includes(` ${phrase} `);
  });
}

/** The part of an agent turn the caller heard: whole sentences played, and the played share of the one cut. */
export function heardText(sentences: readonly { text: string; durationMs: number }[], heardMs: number): string {
  const out: string[] = [];
  let left = heardMs;
  for (const s of sentences) {
    if (left <= 0) break;
    if (left >= s.durationMs) {
      out.push(s.text);
      left -= s.durationMs;
      continue;
    }
    const w = s.text.split(/\s+/);
    const n = Math.floor((w.length * left) / Math.max(1, s.durationMs));
    if (n > 0) out.push(`${w.slice(0, n).join(' ')}…`);
    break;
  }
  return out.join(' ');
}

/** A clause with no punctuation yet is cut before one of these once it has CLAUSE_MIN_WORDS words. */
const JOINING_WORDS = new Set(
  'and but or so because that which who where when while if than until to for with from about in on at by of'.split(' '),
);
const CLAUSE_MIN_WORDS = 5;
/** ...and after this many words when no such word comes. */
const CLAUSE_MAX_WORDS = 8;

/**
 * Where a long clause is cut (0: not yet): before a joining word once it has words enough, else after
 * its last allowed word. Only whole words count (a word is whole once the space after it has come).
 */
function longClauseEnd(buffer: string): number {
  const words = [...buffer.matchAll(/\S+\s+/g)];
  for (let i = CLAUSE_MIN_WORDS; i < Math.min(words.length, CLAUSE_MAX_WORDS); i++) {
    if (JOINING_WORDS.has(words[i]![0].trim().toLowerCase())) return words[i]!.index;
  }
  const last = words[CLAUSE_MAX_WORDS - 1];
  return last ? last.index + last[0].length : 0;
}

/** Words a turn says in clauses before it goes on in sentences. */
const CLAUSE_WORDS = 8;

/**
 * Splits the model's streamed text into sentences, to speak each as soon as it is complete. With
 * `firstClause`, the turn's first words go in clauses ("Yes, we open at nine." speaks "Yes," first): the caller
 * hears the turn begin after a clause is made and synthesized rather than a sentence, and the rest is
 * synthesized while that clause plays. Clauses go on until the turn has said CLAUSE_WORDS words: a short
 * first piece ("You're right.") followed by a long sentence would leave a silence while the sentence is made,
 * one a caller takes for the end of the turn. A clause that runs on unpunctuated is cut at a word ("I'm glad
 * you're interested | in our clinic"): its synthesis grows with its length.
 */
export class SentenceSplitter {
  private buffer = '';
  private clauseNext: boolean;
  private wordsSaid = 0;
  constructor(options: { firstClause?: boolean } = {}) {
    this.clauseNext = options.firstClause ?? false;
  }
  push(delta: string): string[] {
    this.buffer += delta;
    const out: string[] = [];
    for (let end = this.nextEnd(); end > 0; end = this.nextEnd()) {
      const sentence = this.buffer.slice(0, end).trim();
      this.buffer = this.buffer.slice(end);
      if (sentence) out.push(sentence);
      this.wordsSaid += sentence.split(/\s+/).filter(Boolean).length;
      this.clauseNext &&= this.wordsSaid < CLAUSE_WORDS;
    }
    return out;
  }
  /** Where the first sentence (or first clause) ends, after its trailing space, or 0. */
  private nextEnd(): number {
    const punctuated = this.punctuatedEnd();
    if (!this.clauseNext) return punctuated;
    const long = longClauseEnd(this.buffer);
    return punctuated && long ? Math.min(punctuated, long) : punctuated || long;
  }
  /** Where the first sentence or clause ends at its punctuation: ". " after "e.g", "Dr" and the like is no end. */
  private punctuatedEnd(): number {
    const ends = this.clauseNext ? /[.!?…,;:]+\s+|\s[—–]\s|\n+/g : /[.!?…]+\s+|\n+/g;
    for (let m = ends.exec(this.buffer); m; m = ends.exec(this.buffer)) {
      const before = this.buffer.slice(0, m.index);
      if (m[0].startsWith('.') && /\b(e\.g|i\.e|mr|mrs|ms|dr|st|vs|etc|no)$/i.test(before)) continue;
      return m.index + m[0].length;
    }
    return 0;
  }
  /** What is left when the model finishes. */
  flush(): string[] {
    const rest = this.buffer.trim();
    this.buffer = '';
    return rest ? [rest] : [];
  }
}
