import { describe, expect, it } from 'vitest';
import { autoReplyHeader, autoReplyKind, fold, resumeAfterAutoReply } from '../../domain/outreach/auto-replies';

const headers = (h: Record<string, string>) => (name: string) => h[name.toLowerCase()];
const none = headers({});
const kind = (subject: string, text = '', h: Record<string, string> = {}) => autoReplyKind({ header: headers(h), subject, text });

describe('automatic answers by their headers', () => {
  it('reads RFC 3834 Auto-Submitted, X-Autoreply / X-Autorespond and Precedence', () => {
    expect(kind('Re: Hello', '', { 'auto-submitted': 'auto-replied' })).toBe('auto_reply');
    expect(kind('Re: Hello', '', { 'auto-submitted': 'auto-generated' })).toBe('auto_reply');
    expect(kind('Re: Hello', '', { 'auto-submitted': 'no' })).toBeNull();
    expect(kind('Re: Hello', '', { 'auto-submitted': ' No ' })).toBeNull();
    expect(kind('Re: Hello', '', { 'x-autoreply': 'yes' })).toBe('auto_reply');
    expect(kind('Re: Hello', '', { 'x-autorespond': 'Thanks' })).toBe('auto_reply');
    for (const p of ['auto_reply', 'bulk', 'junk', 'Bulk']) expect(kind('Re: Hello', '', { precedence: p }), p).toBe('auto_reply');
    expect(kind('Re: Hello', '', { precedence: 'list' })).toBeNull();
  });

  it('reads the markers Exchange writes', () => {
    expect(autoReplyHeader(headers({ 'x-ms-exchange-inbox-rules-loop': 'ada@prospects.test' }))).toBe('x-ms-exchange-inbox-rules-loop');
    expect(autoReplyHeader(headers({ 'x-ms-exchange-generated-message-source': 'Mailbox Rules Agent' }))).toBe(
      'x-ms-exchange-generated-message-source',
    );
    expect(autoReplyHeader(headers({ 'x-auto-response-suppress': 'All' }))).toBe('X-Auto-Response-Suppress: all');
    expect(autoReplyHeader(headers({ 'x-auto-response-suppress': 'DR, OOF, AutoReply' }))).not.toBeNull();
    // What Outlook writes on a person's meeting answer: not an automatic reply by itself.
    expect(autoReplyHeader(headers({ 'x-auto-response-suppress': 'RN, NRN' }))).toBeNull();
    expect(autoReplyHeader(none)).toBeNull();
  });

  it('an Exchange Online out-of-office answer, header set as received', () => {
    const exchange = headers({
      'thread-topic': 'Hello',
      'thread-index': 'AQHbXyZ1Q2Vx',
      'x-ms-has-attach': '',
      'x-ms-exchange-organization-scl': '-1',
      'x-ms-tnef-correlator': '',
      'auto-submitted': 'auto-generated',
      'x-auto-response-suppress': 'All',
      'x-ms-exchange-inbox-rules-loop': 'ada@prospects.test',
      'x-ms-exchange-generated-message-source': 'Mailbox Rules Agent',
      'content-language': 'de-DE',
    });
    expect(autoReplyKind({ header: exchange, subject: 'Automatische Antwort: Hello', text: 'Ich bin bis 5.12. nicht im Büro.' })).toBe(
      'out_of_office',
    );
    // The same headers with a subject that says nothing: still automatic.
    expect(autoReplyKind({ header: exchange, subject: 'Hello', text: 'Danke für Ihre Nachricht.' })).toBe('auto_reply');
  });

  it('a Gmail vacation responder, header set as received', () => {
    const gmail = headers({
      'auto-submitted': 'auto-replied',
      precedence: 'bulk',
      'x-autoreply': 'yes',
      'mime-version': '1.0',
      'x-google-smtp-source': 'AGHT+IF3x',
    });
    expect(autoReplyKind({ header: gmail, subject: 'Re: Hello', text: 'Thanks for your note. I will answer next week.' })).toBe(
      'auto_reply',
    );
    expect(autoReplyKind({ header: gmail, subject: 'Vacation', text: "I'm currently on vacation until December 3rd." })).toBe(
      'out_of_office',
    );
  });
});

describe('automatic answers by subject and first lines, per language', () => {
  it('English', () => {
    for (const s of ['Out of Office: Hello', 'Automatic reply: Hello', 'OOO until Monday', 'Auto-Reply: Hello', 'Away from the office'])
      expect(kind(s), s).toBe('out_of_office');
    expect(kind('Re: Hello', 'This is an automatic reply. I am out of the office until Monday.')).toBe('out_of_office');
    expect(kind('Re: Hello', "Hi,\nI'm currently on leave with limited access to email.")).toBe('out_of_office');
    expect(kind('Re: our office move')).toBeNull();
    expect(kind('Re: Hello', 'Zoom works, see you then.')).toBeNull();
  });

  it('German, compounds included', () => {
    for (const s of ['Automatische Antwort: Hello', 'Abwesenheitsnotiz: Hello', 'Abwesenheit: Hallo', 'AW: Hello (Abwesenheitsnotiz)'])
      expect(kind(s), s).toBe('out_of_office');
    expect(kind('AW: Hello', 'Vielen Dank für Ihre Nachricht. Ich bin bis einschließlich 3. Dezember nicht im Büro.')).toBe(
      'out_of_office',
    );
    expect(kind('AW: Hello', 'Dies ist eine automatische Rückantwort.')).toBe('out_of_office');
    expect(kind('AW: Hello', 'Gerne, rufen Sie mich an.')).toBeNull();
  });

  it('French, with or without accents', () => {
    for (const s of ['Réponse automatique : Bonjour', 'Reponse automatique: Bonjour', 'RÉPONSE AUTOMATIQUE : Bonjour', 'Absent du bureau'])
      expect(kind(s), s).toBe('out_of_office');
    expect(kind('RE: Bonjour', 'Je suis actuellement absente du bureau et serai de retour le 4 décembre.')).toBe('out_of_office');
    expect(kind('RE: Bonjour', 'Oui, parlons-en jeudi.')).toBeNull();
  });

  it('Spanish', () => {
    for (const s of ['Respuesta automática: Hola', 'Respuesta automatica: Hola', 'Fuera de la oficina'])
      expect(kind(s), s).toBe('out_of_office');
    expect(kind('RE: Hola', 'Estoy fuera de la oficina hasta el 2 de diciembre.')).toBe('out_of_office');
    expect(kind('RE: Hola', 'Sí, me interesa.')).toBeNull();
  });

  it('Italian', () => {
    for (const s of ['Risposta automatica: Ciao', 'Fuori ufficio: Ciao', "Fuori dall'ufficio"]) expect(kind(s), s).toBe('out_of_office');
    expect(kind('R: Ciao', 'Sono fuori ufficio fino al 3 dicembre.')).toBe('out_of_office');
    expect(kind('R: Ciao', 'Va bene, sentiamoci domani.')).toBeNull();
  });

  it('Dutch, compounds included', () => {
    for (const s of ['Automatisch antwoord: Hallo', 'Afwezig: Hallo', 'Afwezigheidsbericht']) expect(kind(s), s).toBe('out_of_office');
    expect(kind('RE: Hallo', 'Ik ben tot en met 3 december afwezig.')).toBe('out_of_office');
    expect(kind('RE: Hallo', 'Prima, bel me morgen.')).toBeNull();
  });

  it('Portuguese', () => {
    for (const s of ['Resposta automática: Olá', 'Resposta automatica: Ola', 'Fora do escritório'])
      expect(kind(s), s).toBe('out_of_office');
    expect(kind('RE: Olá', 'Estou fora do escritório até 3 de dezembro.')).toBe('out_of_office');
    expect(kind('RE: Olá', 'Sim, vamos conversar.')).toBeNull();
  });

  it('reads only the first lines above quoted history', () => {
    const quoted = 'Yes, let us talk.\n\nOn Mon, 3 Nov 2026, Sam wrote:\n> I am out of the office until Monday';
    expect(kind('Re: Hello', quoted)).toBeNull();
    expect(kind('AW: Hello', 'Ja, gerne.\n\nAm Montag schrieb Sam:\n> Ich bin bis Montag nicht im Büro')).toBeNull();
  });

  it('folds case, accents and ß', () => {
    expect(fold('Réponse AUTOMATIQUE — Außer Haus')).toBe('reponse automatique — ausser haus');
  });
});

describe('the return date', () => {
  const now = new Date('2026-11-26T10:00:00Z');
  const at = (text: string) => resumeAfterAutoReply(text, now, 3).toISOString();

  it('resumes the day after a stated return date within 45 days, else after the default pause', () => {
    expect(at('Back on 2026-12-01.')).toBe('2026-12-02T00:00:00.000Z');
    expect(at('I return on December 3rd')).toBe('2026-12-04T00:00:00.000Z');
    expect(at('back 5 Jan')).toBe('2027-01-06T00:00:00.000Z');
    expect(at('Away for a while')).toBe('2026-11-29T10:00:00.000Z');
    expect(at('Back on 2027-06-01')).toBe('2026-11-29T10:00:00.000Z');
    expect(at('Since 2026-11-01')).toBe('2026-11-29T10:00:00.000Z');
  });

  it('reads dates as the other languages write them', () => {
    expect(at('Ich bin bis 5.12. nicht im Büro.')).toBe('2026-12-06T00:00:00.000Z');
    expect(at('Ab dem 07.12.2026 bin ich wieder erreichbar.')).toBe('2026-12-08T00:00:00.000Z');
    expect(at('Ich bin bis einschließlich 3. Dezember nicht im Büro.')).toBe('2026-12-04T00:00:00.000Z');
    expect(at('de retour le 4 décembre')).toBe('2026-12-05T00:00:00.000Z');
    expect(at('de retour le 1er décembre')).toBe('2026-12-02T00:00:00.000Z');
    expect(at('hasta el 2 de diciembre')).toBe('2026-12-03T00:00:00.000Z');
    expect(at('fino al 3 dicembre')).toBe('2026-12-04T00:00:00.000Z');
    expect(at('tot en met 3 december afwezig')).toBe('2026-12-04T00:00:00.000Z');
    expect(at('até 3 de dezembro')).toBe('2026-12-04T00:00:00.000Z');
    expect(at('back 12/15/2026')).toBe('2026-12-16T00:00:00.000Z');
    // Times and version numbers are no dates.
    expect(at('Call me at 10.30 or read v2.5 notes')).toBe('2026-11-29T10:00:00.000Z');
  });
});
