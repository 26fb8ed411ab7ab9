import { describe, expect, it } from 'vitest';
import { describeEvent, renderDigestEmail, renderImmediateEmail } from '../../domain/notifications';

// Notices that say who and where: the contact, the sequence, the mailbox or the integration, and a link
// to act on them.

const base = 'https://crm.example.test';
const outreach = {
  thread_id: 'th-1',
  enrollment_id: 'en-1',
  contact_id: 'co-1',
  contact_name: 'Ada Lovelace',
  contact_email: 'ada@prospects.test',
  sequence_id: 'sq-1',
  sequence_name: 'Q4 founders',
  mailbox_id: 'mb-1',
  mailbox_address: 'sam@acme.test',
  mailbox_name: 'Sam Sender',
  subject: 'Re: Hello',
};

describe('outreach and integration notices', () => {
  it('a reply names the contact, the sequence and the mailbox, and links the thread', () => {
    const d = describeEvent(
      { event_type: 'outreach.reply_received', entity_type: 'outreach_thread', entity_id: 'th-1', payload: outreach },
      { baseUrl: `${base}/` },
    );
    expect(d.title).toBe('Reply from Ada Lovelace <ada@prospects.test>');
    expect(d.body).toBe(
      'Ada Lovelace <ada@prospects.test> answered “Re: Hello” in sequence “Q4 founders” through mailbox Sam Sender <sam@acme.test>. ' +
        'Open the thread in the unibox: https://crm.example.test/outreach/sequencer/unibox/threads/th-1',
    );
    expect(d.link).toEqual({ label: 'Open the thread in the unibox', url: `${base}/outreach/sequencer/unibox/threads/th-1` });
  });

  it('a bounce names them too, with the status, and says what followed; the sender side fills the same fields', () => {
    const d = describeEvent(
      {
        event_type: 'outreach.message_bounced',
        entity_type: 'outreach_thread',
        entity_id: 'th-1',
        payload: {
          ...outreach,
          subject: 'Hello',
          stage: 'smtp',
          status: '5.1.1',
          diagnostic: '550 5.1.1 user unknown',
          enrollment_stopped: true,
          suppressed: true,
        },
      },
      { baseUrl: base },
    );
    expect(d.title).toBe('Bounce: Ada Lovelace <ada@prospects.test>');
    expect(d.body).toContain(
      'The email “Hello” to Ada Lovelace <ada@prospects.test> in sequence “Q4 founders” through mailbox Sam Sender <sam@acme.test> bounced (refused when sent): 550 5.1.1 user unknown.',
    );
    expect(d.body).toContain('The enrollment stopped and the address is on the suppression list.');
    expect(d.body).not.toContain('A contact');
    // Without a name, the address alone.
    const bare = describeEvent({
      event_type: 'outreach.message_bounced',
      entity_type: 'outreach_thread',
      entity_id: 'th-1',
      payload: { contact_email: 'x@prospects.test', status: '5.1.1' },
    });
    expect(bare.title).toBe('Bounce: x@prospects.test');
    expect(bare.link).toBeUndefined();
  });

  it('reads the field names the send-time bounce writes (mailbox_email, detected, detail)', () => {
    const d = describeEvent({
      event_type: 'outreach.message_bounced',
      entity_type: 'outreach_thread',
      entity_id: 'th-1',
      payload: {
        contact_name: 'Ada Lovelace',
        contact_email: 'ada@prospects.test',
        sequence_name: 'Q4 founders',
        mailbox_email: 'sam@acme.test',
        subject: 'Hello',
        detected: 'smtp',
        detail: '550 5.1.1 user unknown',
      },
    });
    expect(d.body).toContain('through mailbox sam@acme.test bounced (refused when sent): 550 5.1.1 user unknown.');
  });

  it('needs-reconnect names the integration and account and says how to reconnect, not the raw token error', () => {
    const d = describeEvent(
      {
        event_type: 'integration.needs_reconnect',
        entity_type: 'integration_connection',
        entity_id: 'cn-1',
        payload: {
          connection_id: 'cn-1',
          integration: 'acme',
          external_account_label: 'alice@acme.test',
          error: 'Token endpoint answered 400 (invalid_grant: token revoked)',
        },
      },
      { baseUrl: base },
    );
    expect(d.title).toBe('Reconnect acme: alice@acme.test');
    expect(d.body).toContain('The acme account alice@acme.test lost its authorization');
    expect(d.body).toContain('connection_id cn-1 (POST /integrations/connect-tokens)');
    expect(d.body).not.toContain('Token endpoint answered');
    expect(d.link).toEqual({ label: 'Reconnect it from its connection', url: `${base}/integrations/connections/cn-1` });
  });

  it('the emails carry the link as an anchor; no other URL (a reply subject) becomes one', () => {
    const d = describeEvent(
      {
        event_type: 'outreach.reply_received',
        entity_type: 'outreach_thread',
        entity_id: 'th-1',
        payload: { ...outreach, subject: 'Re: see https://evil.test/login <b>' },
      },
      { baseUrl: base },
    );
    const mail = renderImmediateEmail(d);
    expect(mail.text).toContain(`Open the thread in the unibox: ${base}/outreach/sequencer/unibox/threads/th-1`);
    expect(mail.html).toContain(`<a href="${base}/outreach/sequencer/unibox/threads/th-1">Open the thread in the unibox</a>`);
    expect(mail.html).not.toContain('href="https://evil.test');
    expect(mail.html).toContain('&lt;b&gt;');
    const digest = renderDigestEmail([{ title: d.title, body: d.body, created_at: new Date(0) }]);
    expect(digest.html).toContain(`<a href="${base}/outreach/sequencer/unibox/threads/th-1">`);
  });
});
