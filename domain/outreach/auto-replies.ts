// Automatic answers (out-of-office notes, autoresponders) as opposed to a person's reply. Headers
// decide first (RFC 3834 `Auto-Submitted`, the common `X-Autoreply`/`X-Autorespond`, `Precedence`, and
// the markers Exchange writes); then the subject and the message's first lines are read for the phrases
// mail programs and people use in English, German, French, Spanish, Italian, Dutch and Portuguese.
// Text is compared folded (lower case, accents removed, ß as ss), and a phrase may open a compound
// ("Abwesenheitsnotiz", "afwezigheidsbericht"): only its start is bound to a word boundary.

export type AutoReplyKind = 'out_of_office' | 'auto_reply';

/** Lower case, accents removed (NFD without combining marks), ß as ss, typographic apostrophes plain. */
export const fold = (text: string): string =>
  text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[’‘]/g, "'");

/** A phrase starting at a word start; `end` also binds its end (short words that would match inside others). */
const phrase = (source: string, end = false) => new RegExp(`(?<![\\p{L}\\p{N}])(?:${source})${end ? '(?![\\p{L}\\p{N}])' : ''}`, 'u');

/** Subjects of automatic answers (Outlook's "Automatic reply:" in each language, out-of-office notes). */
const SUBJECT_PATTERNS: readonly RegExp[] = [
  // English
  phrase(
    'out of (the )?office|automatic reply|auto[- ]?(reply|response)|autoreply|away from (the )?office|on (annual )?leave|on vacation|on holiday',
  ),
  phrase('ooo', true),
  // German
  phrase('automatische (antwort|ruckantwort)|abwesenheit|abwesend|nicht im buro|ausser (dem )?haus|im urlaub'),
  // French
  phrase("reponse automatique|absente? du bureau|message d'absence|absence|absente?|en conges?", true),
  // Spanish
  phrase('respuesta automatica|fuera de (la )?oficina|de vacaciones|ausente'),
  // Italian
  phrase("risposta automatica|fuori (dall')?ufficio|fuori sede|in ferie|assente"),
  // Dutch
  phrase('automatisch antwoord|afwezig|niet op kantoor|met vakantie'),
  // Portuguese
  phrase('resposta automatica|fora do escritorio|de ferias'),
];

/**
 * Phrases of an automatic answer's own first lines. Stricter than subjects: a person who mentions an
 * absence in passing ("I was away, but yes") must still count as a reply, so each phrase is one that
 * announces the absence or the automation itself.
 */
const BODY_PATTERNS: readonly RegExp[] = [
  phrase('this is an? (automatic|automated|auto)[- ]?(reply|response|message)|automatic reply|auto[- ]?reply'),
  phrase(
    "(i am|i'm|i will be|i'll be) (currently )?(out of (the )?office|away from (the )?office|on (annual |parental |sick )?leave|on vacation|on holiday)",
  ),
  phrase('out of (the )?office (until|till|through|from|and)'),
  phrase('abwesenheitsnotiz|automatische (antwort|ruckantwort)|ich bin [^!?\\n]{0,50}(abwesend|nicht im buro|im urlaub|ausser haus)'),
  phrase("reponse automatique|message automatique|message d'absence|je (suis|serai) [^!?\\n]{0,40}absente?|absente? du bureau"),
  phrase(
    'respuesta automatica|mensaje automatico|(estoy|estare) [^!?\\n]{0,40}(fuera de (la )?oficina|de vacaciones|ausente)|fuera de la oficina',
  ),
  phrase("risposta automatica|messaggio automatico|(sono|saro) [^!?\\n]{0,40}(fuori (dall')?ufficio|assente|in ferie)|fuori ufficio"),
  phrase('automatisch antwoord|automatisch bericht|afwezigheidsbericht|ik ben [^!?\\n]{0,50}(afwezig|niet op kantoor|met vakantie)'),
  phrase('resposta automatica|mensagem automatica|(estou|estarei) [^!?\\n]{0,40}(fora do escritorio|ausente|de ferias)|fora do escritorio'),
];

/** Lines of the body read for phrases: an automatic answer says what it is at once, above any quoted history. */
const BODY_LINES = 8;

/** The body's first lines, before quoted history (`>` or "On … wrote:"), folded. */
function opening(text: string): string {
  const lines: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (
      /^>/.test(line) ||
      /^(on|am|le|el|il|op|em) .{0,200}(wrote|schrieb|a ecrit|escribio|ha scritto|schreef|escreveu):?$/i.test(fold(line))
    )
      break;
    if (
      /^-{2,}\s*(original message|urspr|message d'origine|mensaje original|messaggio originale|oorspronkelijk bericht|mensagem original)/i.test(
        fold(line),
      )
    )
      break;
    if (!line) continue;
    lines.push(line);
    if (lines.length >= BODY_LINES) break;
  }
  return fold(lines.join(' '));
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
 * An automatic answer rather than a person's reply: `out_of_office` when its subject or first lines say
 * so (in any of the languages above), `auto_reply` when only its headers mark it, null for a person.
 */
export function autoReplyKind(input: {
  header: (name: string) => string | undefined;
  subject?: string | null;
  text?: string | null;
}): AutoReplyKind | null {
  const subject = fold(input.subject ?? '');
  const saysAbsent = SUBJECT_PATTERNS.some((re) => re.test(subject)) || BODY_PATTERNS.some((re) => re.test(opening(input.text ?? '')));
  if (saysAbsent) return 'out_of_office';
  return autoReplyHeader(input.header) ? 'auto_reply' : null;
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
