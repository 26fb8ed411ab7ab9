import { describe, expect, it } from 'vitest';
import { autoReplyKind, resumeAfterAutoReply } from '../../domain/outreach-threading';

const headers = (h: Record<string, string>) => (name: string) => h[name];

describe('automatic answers', () => {
  it('reads RFC 3834 and common auto-reply headers, and out-of-office subjects', () => {
    expect(autoReplyKind({ header: headers({ 'auto-submitted': 'auto-replied' }), subject: 'Re: Hello' })).toBe('auto_reply');
    expect(autoReplyKind({ header: headers({ 'auto-submitted': 'no' }), subject: 'Re: Hello' })).toBeNull();
    expect(autoReplyKind({ header: headers({ 'x-autoreply': 'yes' }), subject: 'Re: Hello' })).toBe('auto_reply');
    expect(autoReplyKind({ header: headers({ precedence: 'auto_reply' }), subject: 'Re: Hello' })).toBe('auto_reply');
    expect(autoReplyKind({ header: headers({ precedence: 'bulk' }), subject: 'Re: Hello' })).toBeNull();
    for (const subject of [
      'Out of Office: Hello',
      'Automatic reply: Hello',
      'OOO until Monday',
      'Abwesenheit: Hallo',
      'Réponse automatique : Bonjour',
    ]) {
      expect(autoReplyKind({ header: headers({}), subject }), subject).toBe('out_of_office');
    }
    expect(autoReplyKind({ header: headers({}), subject: 'Re: our office move' })).toBeNull();
  });

  it('resumes the day after a stated return date within 45 days, else after the default pause', () => {
    const now = new Date('2026-11-26T10:00:00Z');
    expect(resumeAfterAutoReply('Back on 2026-12-01.', now, 3).toISOString()).toBe('2026-12-02T00:00:00.000Z');
    expect(resumeAfterAutoReply('I return on December 3rd', now, 3).toISOString()).toBe('2026-12-04T00:00:00.000Z');
    expect(resumeAfterAutoReply('back 5 Jan', now, 3).toISOString()).toBe('2027-01-06T00:00:00.000Z');
    expect(resumeAfterAutoReply('Away for a while', now, 3).toISOString()).toBe('2026-11-29T10:00:00.000Z');
    expect(resumeAfterAutoReply('Back on 2027-06-01', now, 3).toISOString()).toBe('2026-11-29T10:00:00.000Z');
    expect(resumeAfterAutoReply('Since 2026-11-01', now, 3).toISOString()).toBe('2026-11-29T10:00:00.000Z');
  });
});
