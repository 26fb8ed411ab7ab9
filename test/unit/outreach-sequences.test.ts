import { describe, expect, it } from 'vitest';
import {
  SEQUENCE_MOVES,
  afterStep,
  nextLocalDayOpening,
  rotationStart,
  sequenceMoveRefusal,
  type SequenceMove,
  type SequenceStatus,
} from '../../domain/outreach/sequences';
import { chooseVariant, oneLine, renderTemplate, unknownVariables } from '../../domain/outreach/templates';
import {
  isBounce,
  makeMessageId,
  messageIdsIn,
  organizationOf,
  originalMessageIds,
  replyHeaders,
  replySubject,
  threadCandidates,
} from '../../domain/outreach/threading';

const ORG = '01900000-0000-7000-8000-000000000001';
const MSG = '01900000-0000-7000-8000-0000000000aa';

describe('sequence state table', () => {
  const expected: Record<SequenceMove, SequenceStatus[]> = {
    activate: ['draft'],
    pause: ['active'],
    resume: ['paused'],
    complete: ['active', 'paused'],
    archive: ['draft', 'paused', 'completed'],
  };
  it.each(Object.entries(expected))('%s is allowed exactly from %j', (move, from) => {
    for (const status of ['draft', 'active', 'paused', 'completed', 'archived'] as SequenceStatus[]) {
      const refusal = sequenceMoveRefusal(move as SequenceMove, status);
      expect(refusal === null, `${move} from ${status}`).toBe(from.includes(status));
    }
    expect(SEQUENCE_MOVES[move as SequenceMove].from).toEqual(from);
  });

  it('schedules the next step delay_days after the previous one, and completes after the last', () => {
    const at = new Date('2030-01-01T10:00:00Z');
    expect(afterStep(0, at, [0, 3, 5])).toEqual({ status: 'active', next_step: 1, next_send_at: new Date('2030-01-04T10:00:00Z') });
    expect(afterStep(2, at, [0, 3, 5])).toEqual({ status: 'completed', next_step: 3, next_send_at: null });
  });

  it('rotates round robin', () => {
    expect([0, 1, 2, 3, 4].map((r) => rotationStart(r, 3))).toEqual([0, 1, 2, 0, 1]);
    expect(rotationStart(5, 0)).toBe(0);
  });

  it('finds the first window opening on the next local day', () => {
    const mb = { window_start: '09:00', window_end: '17:00', window_days: [1, 2, 3, 4, 5], timezone: 'America/New_York' };
    // Wednesday 2030-01-02 15:00 in New York (20:00 UTC): next day's 09:00 local is 14:00 UTC on Thursday.
    expect(nextLocalDayOpening(mb, new Date('2030-01-02T20:00:00Z')).toISOString()).toBe('2030-01-03T14:00:00.000Z');
    // Friday: the next opening is Monday.
    expect(nextLocalDayOpening(mb, new Date('2030-01-04T20:00:00Z')).toISOString()).toBe('2030-01-07T14:00:00.000Z');
  });
});

describe('templates', () => {
  it('fills variables, uses fallbacks for missing values and escapes values in HTML only', () => {
    const values = { first_name: 'Ann <b>', company: null };
    expect(renderTemplate('Hi {{ first_name }} at {{company|your team}}', values, 'text')).toBe('Hi Ann <b> at your team');
    expect(renderTemplate('<p>Hi {{first_name}}</p>{{company}}', values, 'html')).toBe('<p>Hi Ann &lt;b&gt;</p>');
    expect(renderTemplate('{{last_name|<there>}}', {}, 'html')).toBe('&lt;there&gt;');
  });

  it('names unknown variables once each', () => {
    expect(unknownVariables('{{first_name}} {{nick}} {{nick|x}} {{ Foo }}')).toEqual(['nick', 'Foo']);
    expect(unknownVariables('plain {text}')).toEqual([]);
  });

  it('keeps subjects on one line', () => {
    expect(oneLine('a\r\nBcc: x@y')).toBe('a Bcc: x@y');
  });

  it('chooses variants deterministically and about evenly', () => {
    expect(chooseVariant('e1', 0, 1)).toBe(0);
    expect(chooseVariant('e1', 2, 3)).toBe(chooseVariant('e1', 2, 3));
    const counts = [0, 0];
    for (let i = 0; i < 2000; i++) counts[chooseVariant(`01900000-0000-7000-8000-${String(i).padStart(12, '0')}`, 1, 2)]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(800);
  });
});

describe('threading', () => {
  it('writes Message-IDs naming the organization, and reads it back only from ours', () => {
    const id = makeMessageId(MSG, ORG, 'Sam@Acme.TEST');
    expect(id).toBe(`<${MSG}.${ORG}@acme.test>`);
    expect(organizationOf(id)).toBe(ORG);
    expect(organizationOf('<random@example.org>')).toBeNull();
  });

  it('lists candidates closest first and builds reply headers', () => {
    expect(messageIdsIn('<a@x> <b@y>\r\n <c@z>')).toEqual(['<a@x>', '<b@y>', '<c@z>']);
    expect(threadCandidates('<c@z>', '<a@x> <b@y> <c@z>')).toEqual(['<c@z>', '<b@y>', '<a@x>']);
    expect(replyHeaders({ message_id: '<b@y>', references: ['<a@x>'] })).toEqual({ inReplyTo: '<b@y>', references: ['<a@x>', '<b@y>'] });
    expect(replySubject('Hello')).toBe('Re: Hello');
    expect(replySubject('RE: Hello')).toBe('RE: Hello');
  });

  it('recognises bounces and finds the original Message-ID in returned headers', () => {
    expect(isBounce({ contentType: 'multipart/report; report-type=delivery-status', partTypes: [] })).toBe(true);
    expect(isBounce({ contentType: 'multipart/mixed', partTypes: ['message/delivery-status'] })).toBe(true);
    expect(
      isBounce({ contentType: 'text/plain', partTypes: [], from: 'MAILER-DAEMON@mx', subject: 'Undelivered Mail Returned to Sender' }),
    ).toBe(true);
    expect(isBounce({ contentType: 'text/plain', partTypes: [], from: 'ann@x', subject: 'Re: undelivered?' })).toBe(false);
    expect(originalMessageIds('Subject: Hi\r\nMessage-ID:\r\n <orig@acme.test>\r\n')).toEqual(['<orig@acme.test>']);
  });
});
