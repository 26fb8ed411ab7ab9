// Automatic answers (out-of-office notes, autoresponders) as opposed to a person's reply. Headers
// decide first (RFC 3834 `Auto-Submitted`, the common `X-Autoreply`/`X-Autorespond`, `Precedence`, and
// the markers Exchange writes). Without them, a message that quotes our own mail is a person's; otherwise
// the subject and the body's first lines are read for what automatic answers write in English, German,
// French, Spanish, Italian, Dutch and Portuguese (one table per language, AUTO_REPLY_LANGUAGES), only
// where they write it: a false "out of office" pauses a sequence on a person who answered, and nobody
// hears of the answer. Text is compared folded (lower case, accents removed, ß as ss).

export type AutoReplyKind = 'out_of_office' | 'auto_reply';

/** Lower case, accents removed (NFD without combining marks), ß as ss, typographic apostrophes plain. */
export const fold = (text: string): string =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[’‘]/g, "'");

/**
 * What automatic answers write, per language, folded (see `fold`); one table per language, read the
 * same way in the subject and in the body.
 *
 * - `markers` name the message itself ("Automatic reply", "Abwesenheitsnotiz", "Out of office"): they
 *   count where mail programs put them, at the start of the subject before `:` / `-` (or as the whole
 *   subject), in brackets at its end, or as a body line of their own (alone or before `:`).
 * - `phrases` announce the absence or the automation in a sentence ("I am out of the office until",
 *   "je suis actuellement en congés"): they count at the start of the subject and anywhere in the body's
 *   first lines. A phrase is a statement, never a bare topic word ("absence", "holiday"), so a person who
 *   writes about absence management or holiday plans is still a person.
 *
 * Nothing counts after a reply prefix (`Re:`, `AW:`, `RE:` …): what follows it is the subject of the
 * message answered, which is ours.
 */
export interface AutoReplyLanguage {
  markers: readonly string[];
  phrases: readonly string[];
}

export const AUTO_REPLY_LANGUAGES = {
  en: {
    markers: [
      'automatic reply',
      'auto[- ]?(reply|response)',
      'automated (reply|response)',
      'autoreply',
      'autoresponse',
      'out of (the )?office( auto ?reply)?',
      'ooo',
      'away from (the )?office',
      'on (annual |parental |sick )?leave',
      'on (vacation|holiday)',
      'vacation',
      'absent',
    ],
    phrases: [
      'this is an? (automatic|automated|auto)[- ]?(reply|response|message|generated (reply|response|message))',
      "(i am|i'm|im|i will be|i'll be) (currently |now |presently )?(out of (the )?office|away from (the |my )?(office|desk|email)|on (annual |parental |maternity |paternity |sick |medical )?leave|on (vacation|holiday|holidays|pto)|out of town)",
      'out of (the )?office (until|till|through|from|and|on|returning|with)',
      'ooo(?![\\p{L}\\p{N}])',
    ],
  },
  de: {
    markers: [
      'automatische (antwort|ruckantwort|abwesenheitsnotiz)',
      'abwesenheitsnotiz',
      'abwesenheit',
      'abwesend',
      'nicht im buro',
      'ausser (dem )?haus',
      'im urlaub',
      'urlaub',
    ],
    phrases: [
      'abwesenheitsnotiz',
      'automatische (antwort|ruckantwort)',
      'ich bin [^!?\\n]{0,50}(abwesend|nicht im buro|im urlaub|ausser (dem )?haus|in elternzeit)',
      'ich bin (derzeit |zurzeit |momentan |aktuell )?nicht erreichbar',
    ],
  },
  fr: {
    markers: [
      'reponse automatique',
      'message automatique',
      "message d'absence",
      'absente? du bureau',
      'absence',
      'absente?',
      'en conges?',
      'en vacances',
      'hors du bureau',
    ],
    phrases: [
      'reponse automatique',
      'message automatique',
      "message d'absence",
      'je (suis|serai) [^!?\\n]{0,40}(absente?|en conges?|en vacances|hors du bureau|en deplacement)',
    ],
  },
  es: {
    markers: ['respuesta automatica', 'mensaje automatico', 'fuera de (la )?oficina', 'de vacaciones', 'ausente', 'ausencia'],
    phrases: [
      'respuesta automatica',
      'mensaje automatico',
      '(estoy|estare|me encuentro) [^!?\\n]{0,40}(fuera de (la )?oficina|de vacaciones|ausente|de baja)',
    ],
  },
  it: {
    markers: ['risposta automatica', 'messaggio automatico', "fuori (dall'|dal )?ufficio", 'fuori sede', 'in ferie', 'assente'],
    phrases: [
      'risposta automatica',
      'messaggio automatico',
      "(sono|saro) [^!?\\n]{0,40}(fuori (dall'|dal )?ufficio|fuori sede|assente|in ferie|in vacanza)",
    ],
  },
  nl: {
    markers: ['automatisch (antwoord|bericht)', 'afwezigheidsbericht', 'afwezigheidsmelding', 'afwezig', 'niet op kantoor', 'met vakantie'],
    phrases: [
      'automatisch (antwoord|bericht)',
      'afwezigheidsbericht',
      'ik ben [^!?\\n]{0,50}(afwezig|niet op kantoor|met vakantie|niet aanwezig)',
    ],
  },
  pt: {
    markers: ['resposta automatica', 'mensagem automatica', 'fora do escritorio', 'de ferias', 'ausente'],
    phrases: [
      'resposta automatica',
      'mensagem automatica',
      '(estou|estarei) [^!?\\n]{0,40}(fora do escritorio|ausente|de ferias|de licenca)',
    ],
  },
} as const satisfies Record<string, AutoReplyLanguage>;

export type AutoReplyLanguageCode = keyof typeof AUTO_REPLY_LANGUAGES;

const alternatives = (pick: (l: AutoReplyLanguage) => readonly string[]) =>
  Object.values(AUTO_REPLY_LANGUAGES as Record<string, AutoReplyLanguage>)
    .flatMap(pick)
    .map((source) => `(?:${source})`)
    .join('|');
const MARKERS = alternatives((l) => l.markers);
const PHRASES = alternatives((l) => l.phrases);
/** What may follow a marker: a colon or dash (then the subject answered), or nothing. */
const AFTER_MARKER = '\\s*(?:[:：\\-–—]|$)';

/** A marker opening the text (then `:`, `-` or the end). */
const MARKER_AT_START = new RegExp(`^(?:${MARKERS})(?=${AFTER_MARKER})`, 'u');
/** A marker in brackets closing the subject: "AW: Hello (Abwesenheitsnotiz)". */
const MARKER_IN_BRACKETS_AT_END = new RegExp(`[(\\[]\\s*(?:${MARKERS})\\s*[)\\]]\\s*$`, 'u');
/** A body line that is a marker alone, or a marker and a colon or dash before more. */
const MARKER_LINE = new RegExp(`^(?:${MARKERS})\\s*(?:[:：\\-–—].*)?$`, 'u');
/** A phrase opening the text. */
const PHRASE_AT_START = new RegExp(`^(?:${PHRASES})`, 'u');
/** A phrase anywhere, starting at a word start (compounds such as "Abwesenheitsnotizen" included). */
const PHRASE_ANYWHERE = new RegExp(`(?<![\\p{L}\\p{N}])(?:${PHRASES})`, 'u');

/** Our own words (what we sent in the thread): a subject or text that repeats them says nothing about its sender. */
export interface OwnMail {
  subjects?: readonly string[];
  texts?: readonly string[];
}

/**
 * The subject, folded and trimmed, with our own subject blanked out where answers repeat it: at its end
 * ("Re: <ours>", "Automatic reply: <ours>", or ours alone), the longest of ours first.
 */
function theirSubject(subject: string, own: readonly string[]): string {
  const text = fold(subject).replace(/\s+/g, ' ').trim();
  const ours = [...new Set(own.map((s) => fold(s).replace(/\s+/g, ' ').trim()).filter(Boolean))].sort((a, b) => b.length - a.length);
  const repeated = ours.find((s) => text.endsWith(s));
  return repeated ? `${text.slice(0, text.length - repeated.length)}\u0000` : text;
}

/** The subject says it is an automatic answer: a marker where mail programs put one, or a phrase opening it. */
function subjectSaysAbsent(subject: string, own: readonly string[]): boolean {
  const text = theirSubject(subject, own);
  if (MARKER_AT_START.test(text) || MARKER_IN_BRACKETS_AT_END.test(text)) return true;
  return PHRASE_AT_START.test(text);
}

/** The body's first lines say it: a marker as a line of its own, or a phrase anywhere in them. */
function bodySaysAbsent(text: string): boolean {
  const lines = openingLines(text);
  return lines.some((line) => MARKER_LINE.test(line)) || PHRASE_ANYWHERE.test(lines.join(' '));
}

/** Lines of the body read for phrases: an automatic answer says what it is at once, above any quoted history. */
const BODY_LINES = 8;

/** Where quoted history starts: `>`, "On … wrote:" in each language, an original-message marker, an Outlook header block. */
const isHistory = (folded: string): boolean =>
  /^>/.test(folded) ||
  /^(on|am|le|el|il|op|em) .{0,200}(wrote|schrieb|a ecrit|escribio|ha scritto|schreef|escreveu):?$/.test(folded) ||
  /^-{2,}\s*(original message|forwarded message|urspr|weitergeleitete|message d'origine|message transfere|mensaje original|messaggio originale|oorspronkelijk bericht|mensagem original)/.test(
    folded,
  ) ||
  /^(from|sent|von|gesendet|envoye|de|da|van|verzonden|enviado|inviato):\s/.test(folded);

/** The body's first lines, before quoted history, folded. */
function openingLines(text: string): string[] {
  const lines: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = fold(raw.trim());
    if (isHistory(line)) break;
    if (!line) continue;
    lines.push(line);
    if (lines.length >= BODY_LINES) break;
  }
  return lines;
}

/** Text compared for quoting: folded, quote marks dropped, every run of white space one space. */
const flat = (text: string): string =>
  fold(text)
    .split(/\r?\n/)
    .map((line) => line.replace(/^[\s>]+/, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();

/** A quoted line must be this long to be recognised as ours (short lines such as "Hi Ada," are everywhere). */
const QUOTED_LINE_MIN = 16;

/**
 * The message quotes a message we sent (a line of ours, at least QUOTED_LINE_MIN characters, appears in
 * it): what a person's mail program does when they answer, and what automatic answers rarely do.
 */
export function quotesOwnMail(text: string, ownTexts: readonly string[]): boolean {
  const theirs = flat(text);
  if (!theirs) return false;
  for (const own of ownTexts) {
    for (const line of own.split(/\r?\n/)) {
      const ours = flat(line);
      if (ours.length >= QUOTED_LINE_MIN && theirs.includes(ours)) return true;
    }
  }
  return false;
}

/** Headers that mark an automatic message, as the servers and mail programs write them. */
export function autoReplyHeader(header: (name: string) => string | undefined): string | null {
  const value = (name: string) => header(name)?.trim();
  const autoSubmitted = value('auto-submitted')?.toLowerCase();
  if (autoSubmitted && autoSubmitted !== 'no') return `Auto-Submitted: ${autoSubmitted}`;
  for (const name of ['x-autoreply', 'x-autorespond', 'x-autoresponder']) if (value(name) !== undefined) return name;
  const precedence = value('precedence')?.toLowerCase();
  if (precedence && /^(auto[_-]reply|bulk|junk)$/.test(precedence)) return `Precedence: ${precedence}`;
  // Exchange: a message generated by an inbox rule, or by a transport agent (OOF, rules).
  for (const name of ['x-ms-exchange-inbox-rules-loop', 'x-ms-exchange-generated-message-source']) if (value(name)) return name;
  // Exchange writes `All` (or a list naming OOF / AutoReply) on the automatic answers it sends.
  const suppress = value('x-auto-response-suppress')?.toLowerCase();
  if (suppress && /(^|[\s,])(all|oof|autoreply)($|[\s,])/.test(suppress)) return `X-Auto-Response-Suppress: ${suppress}`;
  return null;
}

/**
 * An automatic answer rather than a person's reply. Headers decide first: with one of them, the
 * message is `out_of_office` when its subject or first lines say so, else `auto_reply`. Without them,
 * a message that quotes our own mail is a person's (null); otherwise a marker or phrase where automatic
 * answers put one (see AUTO_REPLY_LANGUAGES) makes it `out_of_office`, and anything else is a person's.
 * `own` holds what we sent in the thread: our subject repeated in theirs is not their words.
 */
export function autoReplyKind(input: {
  header: (name: string) => string | undefined;
  subject?: string | null;
  text?: string | null;
  own?: OwnMail;
}): AutoReplyKind | null {
  const text = input.text ?? '';
  const says = () => subjectSaysAbsent(input.subject ?? '', input.own?.subjects ?? []) || bodySaysAbsent(text);
  if (autoReplyHeader(input.header)) return says() ? 'out_of_office' : 'auto_reply';
  if (quotesOwnMail(text, input.own?.texts ?? [])) return null;
  return says() ? 'out_of_office' : null;
}

/** Month names, folded, per month: English, German, French, Spanish, Italian, Dutch, Portuguese (and short forms). */
const MONTH_NAMES: readonly (readonly string[])[] = [
  ['january', 'jan', 'januar', 'janvier', 'enero', 'gennaio', 'januari', 'janeiro'],
  ['february', 'feb', 'februar', 'fevrier', 'febrero', 'febbraio', 'februari', 'fevereiro'],
  ['march', 'mar', 'marz', 'mars', 'marzo', 'maart', 'marco'],
  ['april', 'apr', 'avril', 'abril', 'aprile'],
  ['may', 'mai', 'mayo', 'maggio', 'mei', 'maio'],
  ['june', 'jun', 'juni', 'juin', 'junio', 'giugno', 'junho'],
  ['july', 'jul', 'juli', 'juillet', 'julio', 'luglio', 'julho'],
  ['august', 'aug', 'aout', 'agosto', 'augustus'],
  ['september', 'sep', 'sept', 'septembre', 'septiembre', 'settembre', 'setembro'],
  ['october', 'oct', 'oktober', 'octobre', 'octubre', 'ottobre', 'okt', 'outubro'],
  ['november', 'nov', 'novembre', 'noviembre', 'novembro'],
  ['december', 'dec', 'dezember', 'decembre', 'diciembre', 'dicembre', 'dez', 'dezembro'],
];
const MONTH_INDEX = new Map(MONTH_NAMES.flatMap((names, i) => names.map((n) => [n, i] as const)));
const MONTH = `(${[...MONTH_INDEX.keys()].sort((a, b) => b.length - a.length).join('|')})\\.?`;

/**
 * When an out-of-office sender says they are back: the first date in the text that lies after `now`
 * and within `maxDays`, plus a day; otherwise `now + defaultDays`. Dates read: ISO `2026-12-01`;
 * day-first numeric `1.12.2026`, `01/12/2026`, `1.12.` (this year or the next; month-first when the day
 * cannot be a month); a month name in any of the languages above, before or after the day (`December
 * 1st`, `1. Dezember`, `1er décembre`, `1 de diciembre`).
 */
export function resumeAfterAutoReply(text: string, now: Date, defaultDays: number, maxDays = 45): Date {
  const fallback = new Date(now.getTime() + defaultDays * 86_400_000);
  const limit = now.getTime() + maxDays * 86_400_000;
  const folded = fold(text);
  const candidates: Date[] = [];
  const years = (y: string | undefined) =>
    y ? [y.length === 2 ? 2000 + Number(y) : Number(y)] : [now.getUTCFullYear(), now.getUTCFullYear() + 1];
  const push = (year: number, month: number, day: number) => {
    if (month < 0 || month > 11 || day < 1 || day > 31) return;
    const d = new Date(Date.UTC(year, month, day));
    if (d.getUTCMonth() === month) candidates.push(d);
  };
  for (const m of folded.matchAll(/\b(20\d\d)-(\d\d)-(\d\d)\b/g)) push(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  for (const m of folded.matchAll(/(?<![\d./-])(\d{1,2})[./](\d{1,2})(?:[./](20\d\d|\d\d)\b|\.(?!\d))/g)) {
    const [a, b] = [Number(m[1]), Number(m[2])];
    const [day, month] = b > 12 && a <= 12 ? [b, a] : [a, b];
    for (const year of years(m[3])) push(year, month - 1, day);
  }
  const named = new RegExp(
    `(?<![\\p{L}\\p{N}])(?:${MONTH}\\s+(\\d{1,2})(?:st|nd|rd|th)?(?!\\d)|(\\d{1,2})(?:st|nd|rd|th|er|\\.|º|o)?\\s+(?:de\\s+)?${MONTH})(?![\\p{L}])(?:,?\\s+(20\\d\\d))?`,
    'gu',
  );
  for (const m of folded.matchAll(named)) {
    const index = MONTH_INDEX.get((m[1] ?? m[4] ?? '').toLowerCase());
    if (index === undefined) continue;
    for (const year of years(m[5])) push(year, index, Number(m[2] ?? m[3]));
  }
  const back = candidates.filter((d) => d.getTime() > now.getTime() && d.getTime() <= limit).sort((a, b) => a.getTime() - b.getTime())[0];
  return back ? new Date(back.getTime() + 86_400_000) : fallback;
}
