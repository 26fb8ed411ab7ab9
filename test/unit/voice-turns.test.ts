import { describe, expect, it } from 'vitest';
import { redactPii } from '../../domain/pii-redaction';
import { fillVariables, isVoicemailGreeting } from '../../domain/voice-prompt';
import { conversationOutcome } from '../../domain/voice-summary';
import {
  DEFAULT_TURN_WAIT,
  endsOpen,
  heardText,
  isBackchannel,
  isListeningNoise,
  isShortAnswer,
  isSpelling,
  SentenceSplitter,
  saysEndPhrase,
  spellingWaitMs,
  turnWaitMs,
  isWholeSpelledValue,
} from '../../domain/voice-turns';
import { mulawToPcm, pcmToMulaw } from '../../voice/audio/mulaw';

describe('turn-taking rules', () => {
  it('hears listening noises as backchannels, never a request', () => {
    for (const t of ['Uh-huh.', 'mm-hmm', 'Right.', 'okay', 'yeah yeah', 'I see.', '', 'Ememam.', 'Wow'])
      expect(isBackchannel(t), t).toBe(true);
    for (const t of ['No, stop.', 'Wait, I need brake pads', 'yeah but the price', 'right now please', 'Stop.', 'Wait.', 'Hey', 'No.'])
      expect(isBackchannel(t), t).toBe(false);
  });

  it('lets a short sound over the agent go on, unless it asks to stop', () => {
    expect(isListeningNoise('In a mom.', 512)).toBe(true);
    for (const t of ['Wait.', 'No no', 'Sorry', 'Hold on']) expect(isListeningNoise(t, 400), t).toBe(false);
    expect(isListeningNoise('In a mom.', 900)).toBe(false);
    expect(isListeningNoise('Uh-huh.', 2000)).toBe(true);
  });

  it('never drops a short yes or no: it is answered at once', () => {
    for (const t of ['Yes.', 'no', 'Yeah.', 'Nope', "Yes. That's it.", 'Okay, no problem.', 'Yes, please.', 'Yes, of course.']) {
      expect(isShortAnswer(t), t).toBe(true);
      expect(turnWaitMs(t, { complete: false }), t).toBe(DEFAULT_TURN_WAIT.completeMs);
    }
    // A yes that goes on is not a short answer: the turn model and the words decide.
    for (const t of ['Yes, and I would like to', 'No, my number is', 'Yes that is the one I want']) expect(isShortAnswer(t), t).toBe(false);
  });

  it('waits longer while the caller spells digits, letters or an address', () => {
    for (const t of ['My number is 077', 'four eight', 'j o h n', 'john dot smith at']) expect(isSpelling(t), t).toBe(true);
    for (const t of ['What are your opening hours?', 'I need it fixed']) expect(isSpelling(t), t).toBe(false);
    expect(turnWaitMs('my number is 077', { complete: true })).toBe(DEFAULT_TURN_WAIT.spellingMs);
    expect(turnWaitMs('I would like to', { complete: false })).toBe(DEFAULT_TURN_WAIT.incompleteMs);
    expect(turnWaitMs('What time do you open?', { complete: true })).toBe(DEFAULT_TURN_WAIT.completeMs);
  });

  it('answers a question the recognizer punctuated as one, whatever the turn model heard', () => {
    expect(turnWaitMs('Do you have anything on Thursday afternoon?', { complete: false })).toBe(DEFAULT_TURN_WAIT.completeMs);
    expect(turnWaitMs('Do you have anything on Thursday', { complete: false })).toBe(DEFAULT_TURN_WAIT.incompleteMs);
    expect(turnWaitMs('Can I book it for my?', { complete: false })).toBe(DEFAULT_TURN_WAIT.incompleteMs);
  });

  it('hears an unfinished sentence in the words when the turn model hears a finished one', () => {
    expect(endsOpen('Can you tell me what the cancellation policy is?')).toBe(false);
    for (const t of ['I would like to', 'My order is...', 'It is for the', 'Can you check my']) {
      expect(endsOpen(t), t).toBe(true);
      expect(turnWaitMs(t, { complete: true }), t).toBeGreaterThan(DEFAULT_TURN_WAIT.completeMs);
    }
    for (const t of ['Is it open?', 'That works for me.', 'Thanks a lot']) expect(endsOpen(t), t).toBe(false);
  });

  it('waits as long as spelling once the caller names what they spell, whatever the last word became', () => {
    for (const t of [
      'My phone number is.',
      'My email was...',
      'My email was J-O-H-N Done SMITH',
      'My member ID is DD 773',
      'my email is j o h n dot smith',
      'My member ID is. dd',
      'My email list.',
      'My phone numbers.',
    ])
      expect(turnWaitMs(t, { complete: true }), t).toBe(DEFAULT_TURN_WAIT.spellingMs);
    for (const t of ['What is your phone number?', 'I lost my card yesterday.', 'Which insurance plans do you accept?'])
      expect(turnWaitMs(t, { complete: true }), t).toBe(DEFAULT_TURN_WAIT.completeMs);
  });

  it('answers a spelled value at once when it is whole, and waits while it is not', () => {
    const whole = [
      'My phone number is 415 555 0192.',
      'My phone number is four one five, five five five, zero one nine two.',
      'My number is 1 800 555 0199',
      'My email is j o h n dot s m i t h at example dot com.',
      'My email is john.smith@example.com',
      'My email was J-O-H-N dot SMITH at example.com',
      'Her name is Emma, E M M A.',
      'Her name is Emma, E-M-M-A.',
      'Her date of birth is March 14th, 2017.',
      'Her date of birth is March fourteenth two thousand seventeen.',
      'My date of birth is June fifth nineteen oh five',
    ];
    for (const t of whole) {
      expect(isWholeSpelledValue(t), t).toBe(true);
      expect(turnWaitMs(t, { complete: true }), t).toBe(DEFAULT_TURN_WAIT.completeMs);
    }
    const partial = [
      'My phone number is 415 555',
      'My number is 020 7946 0958', // not a North American number: its length says nothing
      'My email is john dot smith at example dot',
      'My email is john dot smith at example',
      'My email is john dot smith at example.',
      'My member ID is DD 773 204 18.',
      'Her name is Emma, E M M',
    ];
    for (const t of partial) {
      expect(isWholeSpelledValue(t), t).toBe(false);
      expect(turnWaitMs(t, { complete: true }), t).toBe(DEFAULT_TURN_WAIT.spellingMs);
    }
    expect(isWholeSpelledValue('My date of birth is March twenty first nineteen')).toBe(false);
  });

  it('finds end-call phrases as whole words', () => {
    expect(saysEndPhrase('Okay, goodbye then!', ['goodbye'])).toBe(true);
    expect(saysEndPhrase('Goodbyes are hard', ['goodbye'])).toBe(false);
  });

  it('keeps what the caller heard of a cut turn', () => {
    const sentences = [
      { text: 'We sell brakes.', durationMs: 1000 },
      { text: 'We ship in two days to every town.', durationMs: 2000 },
    ];
    expect(heardText(sentences, 200)).toBe('');
    expect(heardText(sentences, 500)).toBe('We…');
    expect(heardText(sentences, 1000)).toBe('We sell brakes.');
    expect(heardText(sentences, 2000)).toBe('We sell brakes. We ship in two…');
    expect(heardText(sentences, 9000)).toBe('We sell brakes. We ship in two days to every town.');
  });

  it('splits streamed text into sentences, not at abbreviations', () => {
    const s = new SentenceSplitter();
    expect(s.push('Hello there. Dr. Smith is')).toEqual(['Hello there.']);
    expect(s.push(' in today! And')).toEqual(['Dr. Smith is in today!']);
    expect(s.flush()).toEqual(['And']);
  });

  it("waits while spelling by the caller's own pauses once they have paused, counted from their last sound", () => {
    const spelled = 'My member ID is DD 773';
    expect(turnWaitMs(spelled, { complete: true }, DEFAULT_TURN_WAIT, null)).toBe(DEFAULT_TURN_WAIT.spellingMs);
    expect(turnWaitMs(spelled, { complete: true }, DEFAULT_TURN_WAIT, { longestPauseMs: null, silenceMs: 300 })).toBe(
      DEFAULT_TURN_WAIT.spellingMs,
    );
    // Pauses of 1 s: 1.5 s of silence in all, 300 ms of it already past.
    expect(turnWaitMs(spelled, { complete: true }, DEFAULT_TURN_WAIT, { longestPauseMs: 1000, silenceMs: 300 })).toBe(1200);
    // A quick speller is still given the unfinished-turn wait; a slow one never more than spelling's.
    expect(spellingWaitMs({ longestPauseMs: 400, silenceMs: 350 })).toBe(DEFAULT_TURN_WAIT.incompleteMs);
    expect(spellingWaitMs({ longestPauseMs: 3000, silenceMs: 350 })).toBe(DEFAULT_TURN_WAIT.spellingMs);
    // A whole value is answered at once, whatever the pauses.
    expect(
      turnWaitMs('My phone number is 415 555 0192', { complete: true }, DEFAULT_TURN_WAIT, { longestPauseMs: 800, silenceMs: 0 }),
    ).toBe(DEFAULT_TURN_WAIT.completeMs);
  });

  it('speaks the first eight words of a turn in clauses, the rest in sentences', () => {
    const s = new SentenceSplitter({ firstClause: true });
    expect(s.push('Yes, we open at nine')).toEqual(['Yes,']);
    expect(s.push(', and close at five. Then')).toEqual(['we open at nine,', 'and close at five.']);
    expect(s.push(' we close for lunch, from noon to one. ')).toEqual(['Then we close for lunch, from noon to one.']);
    const plain = new SentenceSplitter();
    expect(plain.push('Yes, we open at nine. ')).toEqual(['Yes, we open at nine.']);
  });

  it('cuts a first clause that runs on unpunctuated at a word: before a joining word, or after eight words', () => {
    const joined = new SentenceSplitter({ firstClause: true });
    expect(joined.push('We do offer a discount for')).toEqual([]); // "for" may be the start of a longer word
    expect(joined.push(' new patients. Then')).toEqual(['We do offer a discount', 'for new patients.']);
    // Under five words, a joining word does not cut: a short sentence is said whole.
    expect(new SentenceSplitter({ firstClause: true }).push('We open at ten on Saturdays. ')).toEqual(['We open at ten on Saturdays.']);
    const long = new SentenceSplitter({ firstClause: true });
    expect(long.push('Our new patient forms can be filled online before ')).toEqual(['Our new patient forms can be filled online']);
    // Punctuation that comes first still ends it; once eight words are said, sentences are never cut at words.
    const punctuated = new SentenceSplitter({ firstClause: true });
    expect(punctuated.push('We are open from nine, and close at five. Then we see walk in patients from ten. ')).toEqual([
      'We are open from nine,',
      'and close at five.',
      'Then we see walk in patients from ten.',
    ]);
  });
});

describe('what a conversation keeps', () => {
  it('redacts card numbers, phones and e-mail addresses, however the recognizer wrote them', () => {
    expect(redactPii('My card is 4111 1111 1111 1111').text).toBe('My card is [number]');
    expect(redactPii('It is 4,111,111,111,111,1').text).toBe('It is [number]');
    expect(redactPii('write to dana at example dot com').text).toBe('write to [email]');
    expect(redactPii('I need 2 tyres for 300 dollars')).toEqual({ text: 'I need 2 tyres for 300 dollars', redacted: false });
  });

  it('fills variables and leaves unknown ones as written', () => {
    expect(fillVariables('Hi {{ first_name }}, {{missing}}', { first_name: 'Dana' })).toBe('Hi Dana, {{missing}}');
  });

  it('tells a voicemail greeting from a person', () => {
    expect(isVoicemailGreeting('Please leave a message after the tone')).toBe(true);
    expect(isVoicemailGreeting('Hello, Sam speaking')).toBe(false);
  });

  it('states the outcome from the turns and the end', () => {
    const turns = [{ role: 'caller' as const, text: 'hi', heard_text: null, audit: {} }];
    expect(conversationOutcome(turns, 'completed', 'caller_hung_up', null).disposition).toBe('answered');
    expect(conversationOutcome([], 'no_input', 'silence', null).disposition).toBe('no_input');
    expect(conversationOutcome(turns, 'transferred', 'transferred', '+14155550100')).toMatchObject({
      disposition: 'transferred',
      transferred_to: '+14155550100',
    });
    expect(conversationOutcome(turns, 'voicemail', 'voicemail', null).disposition).toBe('voicemail');
  });
});

describe('μ-law', () => {
  it('round-trips speech within the codec’s step', () => {
    const pcm = Int16Array.from({ length: 800 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    const back = mulawToPcm(pcmToMulaw(pcm));
    for (let i = 0; i < pcm.length; i++) expect(Math.abs(back[i]! - pcm[i]!)).toBeLessThanOrEqual(Math.abs(pcm[i]!) / 16 + 8);
    expect(pcmToMulaw(new Int16Array([0]))[0]).toBe(0xff);
  });
});
