import { describe, expect, it } from 'vitest';
import { AUTO_REPLY_LANGUAGES, autoReplyKind, quotesOwnMail } from '../../domain/outreach/auto-replies';

// A person's answer taken for an out-of-office pauses the sequence on someone who answered, tells nobody,
// and lets the follow-up go out: the rule reads a marker or phrase only where automatic answers put one
// (the start of the subject, after the automatic-answer prefixes, never after a reply prefix; the body's
// first lines), and a message quoting our own mail is a person's. Each language below has its near misses.

const none = () => undefined;
const person = (subject: string, text: string, own: { subjects?: string[]; texts?: string[] } = {}) =>
  autoReplyKind({ header: none, subject, text, own });

describe('a plain reply whose subject only repeats ours is a person', () => {
  const cases: [string, string, string][] = [
    // [our subject, their subject, their text]
    ['Absence management for Acme', 'Re: Absence management for Acme', 'Sounds interesting, tell me more.'],
    ['Plans while on holiday?', 'Re: Plans while on holiday?', 'Yes, we should talk.'],
    ['Fuera de la oficina: ideas', 'Re: Fuera de la oficina: ideas', 'Sí, me interesa.'],
    ['Out of office coverage for your team', 'RE: Out of office coverage for your team', 'Good timing, call me.'],
    ['Vacation policy', 'Vacation policy', 'Who are you?'],
    ['Abwesenheitsplanung bei Acme', 'AW: Abwesenheitsplanung bei Acme', 'Gerne, rufen Sie mich an.'],
    ['Urlaubsplanung: eine Idee', 'AW: Urlaubsplanung: eine Idee', 'Klingt gut.'],
    ['Abwesenheit: ein Tool', 'AW: Abwesenheit: ein Tool', 'Ja, gerne.'],
    ['Absence de suivi chez Acme', 'RE: Absence de suivi chez Acme', 'Oui, parlons-en jeudi.'],
    ['Congés payés : une idée', 'RE: Congés payés : une idée', 'Pourquoi pas.'],
    ['Réponse automatique aux clients', 'RE: Réponse automatique aux clients', 'Intéressant.'],
    ['Ausente de reuniones', 'RE: Ausente de reuniones', 'Cuéntame más.'],
    ['De vacaciones sin preocupaciones', 'RE: De vacaciones sin preocupaciones', 'Sí, me interesa.'],
    ['Fuori ufficio: idee', 'R: Fuori ufficio: idee', 'Va bene, sentiamoci domani.'],
    ['In ferie senza pensieri', 'R: In ferie senza pensieri', 'Interessante.'],
    ['Afwezig op kantoor?', 'RE: Afwezig op kantoor?', 'Prima, bel me morgen.'],
    ['Met vakantie: tips', 'Antw: Met vakantie: tips', 'Leuk.'],
    ['Fora do escritório: ideias', 'RES: Fora do escritório: ideias', 'Sim, vamos conversar.'],
    ['De férias com tranquilidade', 'RES: De férias com tranquilidade', 'Sim.'],
  ];
  for (const [ours, subject, text] of cases) {
    it(subject, () => {
      expect(person(subject, text, { subjects: [ours] })).toBeNull();
      // Without knowing our subject the reply prefix alone keeps it a person's.
      expect(person(subject, text)).toBeNull();
    });
  }

  it('a subject starting with a topic word, not a marker before a colon, is no automatic answer', () => {
    for (const s of [
      'Absence management for Acme',
      'Holiday plans',
      'Vacation planning for 2027',
      'Abwesenheitsmanagement',
      'Urlaubsantrag digital',
      'Absences et congés',
      'Ausencias y vacaciones',
      'Assenze e ferie',
      'Afwezigheidsregistratie',
      'Férias coletivas',
      'Outgoing office hours',
    ])
      expect(person(s, 'Tell me more.'), s).toBeNull();
  });
});

describe('a person who mentions an absence is a person', () => {
  it('in passing, in each language', () => {
    const texts = [
      'Our absence management is a mess, happy to chat.',
      'Holiday season is busy for us, but yes, send over pricing.',
      'Die Abwesenheitsplanung ist bei uns ein Thema. Rufen Sie an.',
      'Mein Kollege ist im Urlaub, aber ich bin interessiert.',
      'Oui, la gestion des absences nous intéresse.',
      'Mon collègue est absent du bureau, mais je suis intéressé.',
      'Sí, la gestión de vacaciones nos interesa.',
      'El director está ausente, pero me interesa.',
      'Sì, le ferie sono un problema per noi.',
      'Ja, afwezigheid is bij ons een probleem.',
      'Sim, as férias são um problema para nós.',
    ];
    for (const text of texts) expect(person('Re: Hello', text), text).toBeNull();
  });

  it('announcing an absence, above a quote of our mail: a person answering (headers would say otherwise)', () => {
    const ours = 'Hi Ada,\nwould a short call about absence tracking make sense next week?\nSam';
    const answers = [
      "I'm on holiday until the 9th, but yes, let's talk then.",
      'Ich bin bis 9.12. im Urlaub, danach gerne.',
      'Je suis actuellement en congés, de retour le 9 décembre : appelez-moi ensuite.',
      'Estoy de vacaciones hasta el lunes, pero sí, hablemos.',
    ];
    for (const answer of answers) {
      const text = `${answer}\n\nOn Mon, 1 Dec 2026, Sam <sam@outreach.test> wrote:\n> Hi Ada,\n> would a short call about absence tracking make sense next week?\n> Sam`;
      expect(person('Re: Hello', text, { texts: [ours] }), answer).toBeNull();
      // Outlook quotes without ">" under a header block; re-wrapped lines still count.
      const outlook = `${answer}\n\nFrom: Sam <sam@outreach.test>\nSent: Monday\nSubject: Hello\n\nHi Ada,\nwould a short call about absence\ntracking make sense next week?`;
      expect(person('RE: Hello', outlook, { texts: [ours] }), answer).toBeNull();
    }
    // With automatic-answer headers the same text is an automatic answer.
    expect(
      autoReplyKind({
        header: (n) => (n === 'auto-submitted' ? 'auto-replied' : undefined),
        subject: 'Re: Hello',
        text: `I'm on holiday until the 9th.\n> would a short call about absence tracking make sense next week?`,
        own: { texts: [ours] },
      }),
    ).toBe('out_of_office');
  });

  it('short lines of ours ("Hi Ada,") are not taken for a quote', () => {
    expect(quotesOwnMail('Hi Ada, I am out of the office until Monday.', ['Hi Ada,\nSam'])).toBe(false);
    expect(
      quotesOwnMail('> would a short call about absence tracking\n> make sense', ['would a short call about absence tracking make sense']),
    ).toBe(true);
  });
});

describe('header-less automatic answers, subject and body read alike', () => {
  it('a French out-of-office in the body only (no headers, plain subject)', () => {
    expect(person('RE: Bonjour', 'Bonjour,\n\nje suis actuellement en congés, de retour le 9 décembre.\n\nCordialement')).toBe(
      'out_of_office',
    );
    expect(person('Je suis actuellement en congés', 'Merci.')).toBe('out_of_office');
  });

  it('every marker and phrase of each language counts in the subject and in the body', () => {
    const samples: Record<string, { marker: string; phrase: string }> = {
      en: { marker: 'Out of Office', phrase: 'I am currently out of the office until Monday.' },
      de: { marker: 'Abwesenheitsnotiz', phrase: 'Ich bin bis zum 3. Dezember nicht im Büro.' },
      fr: { marker: 'Réponse automatique', phrase: 'Je suis actuellement en congés jusqu’au 9 décembre.' },
      es: { marker: 'Respuesta automática', phrase: 'Estoy de vacaciones hasta el 2 de diciembre.' },
      it: { marker: 'Risposta automatica', phrase: 'Sono in ferie fino al 3 dicembre.' },
      nl: { marker: 'Automatisch antwoord', phrase: 'Ik ben met vakantie tot 3 december.' },
      pt: { marker: 'Resposta automática', phrase: 'Estou de férias até 3 de dezembro.' },
    };
    expect(Object.keys(samples).sort()).toEqual(Object.keys(AUTO_REPLY_LANGUAGES).sort());
    for (const [lang, { marker, phrase }] of Object.entries(samples)) {
      expect(person(`${marker}: Hello`, 'Thanks.'), `${lang} marker in the subject`).toBe('out_of_office');
      expect(person(marker, 'Thanks.'), `${lang} marker as the subject`).toBe('out_of_office');
      expect(person('Hello', `${marker}\n\nThanks.`), `${lang} marker as a body line`).toBe('out_of_office');
      expect(person(phrase, 'Thanks.'), `${lang} phrase opening the subject`).toBe('out_of_office');
      expect(person('Re: Hello', `Hello,\n${phrase}`), `${lang} phrase in the body`).toBe('out_of_office');
      // After a reply prefix, the same words are the subject answered.
      expect(person(`Re: ${marker} and more`, 'Thanks.'), `${lang} after Re:`).toBeNull();
      expect(person(`Re: ${phrase}`, 'Thanks.'), `${lang} phrase after Re:`).toBeNull();
    }
  });

  it('our subject after an automatic prefix still shows the prefix', () => {
    const own = { subjects: ['Absence management for Acme'] };
    expect(person('Automatic reply: Absence management for Acme', 'Thanks.', own)).toBe('out_of_office');
    expect(person('Abwesenheitsnotiz: Absence management for Acme', 'Danke.', own)).toBe('out_of_office');
    expect(person('Réponse automatique : Absence management for Acme', 'Merci.', own)).toBe('out_of_office');
    expect(person('Respuesta automática: Absence management for Acme', 'Gracias.', own)).toBe('out_of_office');
    // Our subject alone, even one that opens with a marker, is theirs to repeat.
    expect(person('Vacation: a better way', 'ok', { subjects: ['Vacation: a better way'] })).toBeNull();
  });
});
