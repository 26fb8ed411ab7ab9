import { describe, expect, it } from 'vitest';
import { connectStreamTwiml } from '../../domain/twiml';
import { twilioAmdCallbackUrl, twilioStatusCallbackUrl } from '../../platform/adapters/dialers/twilio';
import { twilioSignature, verifyTwilioSignature } from '../../platform/adapters/dialers/twilio-signature';
import { twilioCallStatus, twilioEvent } from '../../platform/adapters/dialers/twilio-status';
import { verifyVapiSecret } from '../../platform/adapters/dialers/vapi-signature';
import { vapiCallStatus, vapiEvent } from '../../platform/adapters/dialers/vapi-status';

// The providers' callback signatures and status mappings (platform/dialers/).

describe('X-Twilio-Signature', () => {
  // Twilio's published example (its security documentation and helper libraries' tests).
  const token = '12345';
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = { CallSid: 'CA1234567890ABCDE', Caller: '+14158675309', Digits: '1234', From: '+14158675309', To: '+18005551212' };
  const expected = 'RSOYDt4T1cUTdK1PDd93/VVr8B8=';

  it("matches Twilio's published example", () => {
    expect(twilioSignature(token, url, params)).toBe(expected);
    expect(verifyTwilioSignature(token, expected, url, params)).toBe(true);
  });

  it('does not depend on the order the parameters arrive in', () => {
    const reversed = Object.fromEntries(Object.entries(params).reverse());
    expect(verifyTwilioSignature(token, expected, url, reversed)).toBe(true);
  });

  it('refuses a changed parameter, URL, token, an extra parameter or an empty signature', () => {
    expect(verifyTwilioSignature(token, expected, url, { ...params, Digits: '1235' })).toBe(false);
    expect(verifyTwilioSignature(token, expected, url.replace('foo=1', 'foo=2'), params)).toBe(false);
    expect(verifyTwilioSignature('54321', expected, url, params)).toBe(false);
    expect(verifyTwilioSignature(token, expected, url, { ...params, AnsweredBy: 'human' })).toBe(false);
    expect(verifyTwilioSignature(token, '', url, params)).toBe(false);
    expect(verifyTwilioSignature(token, `${expected}x`, url, params)).toBe(false);
  });

  it("accepts the URL signed with or without its scheme's default port", () => {
    const withPort = 'https://mycompany.com:443/myapp.php?foo=1&bar=2';
    expect(verifyTwilioSignature(token, twilioSignature(token, withPort, params), url, params)).toBe(true);
    expect(verifyTwilioSignature(token, expected, withPort, params)).toBe(true);
    // Another port is another URL.
    expect(verifyTwilioSignature(token, expected, 'https://mycompany.com:8443/myapp.php?foo=1&bar=2', params)).toBe(false);
  });
});

describe('x-vapi-secret', () => {
  it('accepts only the exact secret', () => {
    expect(verifyVapiSecret('s3cret-s3cret-s3cret', 's3cret-s3cret-s3cret')).toBe(true);
    expect(verifyVapiSecret('s3cret-s3cret-s3cret', 's3cret-s3cret-s3cre')).toBe(false);
    expect(verifyVapiSecret('s3cret-s3cret-s3cret', 's3cret-s3cret-s3cret ')).toBe(false);
    expect(verifyVapiSecret('s3cret-s3cret-s3cret', '')).toBe(false);
    expect(verifyVapiSecret('s3cret-s3cret-s3cret', undefined)).toBe(false);
  });
});

describe('status mapping', () => {
  it("maps Twilio's statuses, a machine's answer being no answer (voicemail)", () => {
    expect(['queued', 'initiated', 'ringing', 'in-progress'].map((s) => twilioCallStatus(s))).toEqual([
      'ringing',
      'ringing',
      'ringing',
      'in_progress',
    ]);
    expect(['completed', 'busy', 'no-answer', 'failed', 'canceled'].map((s) => twilioCallStatus(s))).toEqual([
      'completed',
      'busy',
      'no_answer',
      'failed',
      'canceled',
    ]);
    expect(twilioCallStatus('completed', 'human')).toBe('completed');
    expect(twilioCallStatus('completed', 'machine_end_beep')).toBe('no_answer');
    expect(twilioCallStatus('completed', 'fax')).toBe('no_answer');
    expect(twilioCallStatus('mystery')).toBeNull();
    expect(
      twilioEvent('k', { sid: 'CA1', status: 'completed', answeredBy: 'machine_start', duration: '12', recordingUrl: 'https://r' }),
    ).toEqual({
      idempotency_key: 'k',
      status: 'no_answer',
      provider_call_id: 'CA1',
      duration_seconds: 12,
      outcome: {
        provider: 'twilio',
        provider_status: 'completed',
        disposition: 'voicemail',
        answered_by: 'machine_start',
        recording_url: 'https://r',
      },
    });
  });

  it("maps Vapi's statuses and ended reasons", () => {
    expect(vapiCallStatus('queued')).toBe('ringing');
    expect(vapiCallStatus('in-progress')).toBe('in_progress');
    expect(vapiCallStatus('ended', 'customer-ended-call')).toBe('completed');
    expect(vapiCallStatus('ended', 'assistant-ended-call')).toBe('completed');
    expect(vapiCallStatus('ended', 'customer-busy')).toBe('busy');
    expect(vapiCallStatus('ended', 'customer-did-not-answer')).toBe('no_answer');
    expect(vapiCallStatus('ended', 'voicemail')).toBe('no_answer');
    expect(vapiCallStatus('ended', 'manually-canceled')).toBe('canceled');
    expect(vapiCallStatus('ended', 'twilio-failed-to-connect-call')).toBe('failed');
    expect(vapiCallStatus('ended', 'pipeline-error-openai-llm-failed')).toBe('failed');
    const event = vapiEvent('k', {
      id: 'c1',
      status: 'ended',
      endedReason: 'customer-ended-call',
      startedAt: '2026-01-01T10:00:00Z',
      endedAt: '2026-01-01T10:01:05Z',
      transcript: 'AI: hi',
      summary: 'ok',
    });
    expect(event).toMatchObject({
      status: 'completed',
      duration_seconds: 65,
      outcome: { transcript: 'AI: hi', summary: 'ok', disposition: 'completed' },
    });
  });
});

describe('Twilio call request', () => {
  it('streams the answered call to the engine, asks what next when the stream ends, and calls back with the attempt key', () => {
    expect(
      connectStreamTwiml('wss://voice.example.com/twilio/media-stream', { token: 'a&b' }, 'https://crm.example.com/ended?x=1&y=2'),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect action="https://crm.example.com/ended?x=1&amp;y=2" method="POST">' +
        '<Stream url="wss://voice.example.com/twilio/media-stream"><Parameter name="token" value="a&amp;b"/></Stream></Connect></Response>',
    );
    expect(twilioStatusCallbackUrl('https://crm.example.com/', 'c:k:1')).toBe(
      'https://crm.example.com/telephony/twilio/status?key=c%3Ak%3A1',
    );
    expect(twilioAmdCallbackUrl('https://crm.example.com/', 'c:k:1', 'conn')).toBe(
      'https://crm.example.com/telephony/twilio/amd?key=c%3Ak%3A1&account=conn',
    );
  });
});
