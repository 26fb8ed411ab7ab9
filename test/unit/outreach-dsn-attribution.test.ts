import { describe, expect, it } from 'vitest';
import { originalMessageIds } from '../../domain/outreach/threading';

describe('the message a delivery report returns', () => {
  it("is named by the original's own Message-ID first, whatever the header order", () => {
    const headers = [
      'From: Sam <sam@outreach.test>',
      'In-Reply-To: <step1@outreach.test>',
      'References: <step0@outreach.test>',
      ' <step1@outreach.test>',
      'Message-ID: <step2@outreach.test>',
      'Subject: Re: Hello',
    ].join('\r\n');
    expect(originalMessageIds(headers)).toEqual(['<step2@outreach.test>', '<step1@outreach.test>', '<step0@outreach.test>']);
  });

  it('without a Message-ID, In-Reply-To then References from the end', () => {
    expect(originalMessageIds('References: <a@x> <b@x>\r\nIn-Reply-To: <b@x>\r\n')).toEqual(['<b@x>', '<a@x>']);
    expect(originalMessageIds('Subject: nothing\r\n')).toEqual([]);
  });
});
