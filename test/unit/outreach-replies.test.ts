import { describe, expect, it } from 'vitest';
import { classifyReply, replyOpening } from '../../domain/outreach/replies';

const reply = (text: string) => classifyReply({ bounce: false, autoReply: null, text });

describe('reply classification', () => {
  it('bounces and automatic answers keep their kind, whatever the text says', () => {
    expect(classifyReply({ bounce: true, autoReply: null, text: 'I am interested' })).toBe('bounce');
    expect(classifyReply({ bounce: false, autoReply: 'out_of_office', text: 'Interested, back Monday' })).toBe('out_of_office');
    expect(classifyReply({ bounce: false, autoReply: 'auto_reply', text: 'Thanks for your email' })).toBe('auto_reply');
  });

  it('reads interest from the first lines', () => {
    expect(reply('Sounds interesting, tell me more.')).toBe('interested');
    expect(reply("Hi Sam,\n\nSure, let's talk next week. When are you free?")).toBe('interested');
    expect(reply('Yes please')).toBe('interested');
    expect(reply('Could you send over pricing?')).toBe('interested');
    expect(reply('Happy to chat – book a call on my calendar')).toBe('interested');
  });

  it('a refusal wins over interest ("not interested" contains "interested")', () => {
    expect(reply('Not interested, thanks.')).toBe('not_interested');
    expect(reply("I'm really not that interested.")).toBe('not_interested');
    expect(reply('No thanks')).toBe('not_interested');
    expect(reply('Please remove me from your list')).toBe('not_interested');
    expect(reply('Unsubscribe')).toBe('not_interested');
    expect(reply('We’re all set, don’t contact me again')).toBe('not_interested');
    expect(reply("Please don't send me more of these")).toBe('not_interested');
  });

  it('a reply naming neither is other', () => {
    expect(reply('Who are you?')).toBe('other');
    expect(reply('')).toBe('other');
    expect(classifyReply({ bounce: false, autoReply: null, text: null })).toBe('other');
  });

  it('quoted history and signatures are not read', () => {
    const text = 'Who gave you my address?\n\nOn Mon, 3 Nov 2026 at 10:00, Sam <sam@x.test> wrote:\n> Interested in a demo? Let us talk.';
    expect(replyOpening(text)).toBe('who gave you my address?');
    expect(reply(text)).toBe('other');
    expect(reply('Who is this?\n--\nJane, Head of Interest Rates\nNot interested in spam')).toBe('other');
    expect(reply('Maybe later\n-----Original Message-----\nInterested?')).toBe('other');
  });

  it('only the first lines count', () => {
    expect(reply('a\nb\nc\nd\ne\nf\nInterested')).toBe('other');
  });
});
