import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CALLING_WINDOW,
  attemptKey,
  isInWindow,
  isValidTimeZone,
  nextWindowOpening,
  numberForAttempt,
  parseAttemptKey,
  retryAt,
  retryDelaySeconds,
  stateAfterOutcome,
} from '../../domain/campaign-schedule';
import { ConfigError, loadConfig } from '../../platform/core/config';
import { parseOutcomeWeights, signBody, verifySignature } from '../../platform/adapters/dialers/dialer';
import { pickOutcome } from '../../platform/adapters/dialers/simulated';

const at = (iso: string) => new Date(iso);
const weekdays = DEFAULT_CALLING_WINDOW; // 09:00-20:00, Monday to Friday
const always = { start: '00:00', end: '24:00', days: [1, 2, 3, 4, 5, 6, 7] };

describe('calling window', () => {
  it('holds between start (inclusive) and end (exclusive) on listed days, in the given zone', () => {
    // Monday 2025-06-02: Paris is UTC+2.
    expect(isInWindow(at('2025-06-02T07:00:00Z'), 'Europe/Paris', weekdays)).toBe(true); // 09:00 local
    expect(isInWindow(at('2025-06-02T06:59:00Z'), 'Europe/Paris', weekdays)).toBe(false); // 08:59
    expect(isInWindow(at('2025-06-02T17:59:00Z'), 'Europe/Paris', weekdays)).toBe(true); // 19:59
    expect(isInWindow(at('2025-06-02T18:00:00Z'), 'Europe/Paris', weekdays)).toBe(false); // 20:00
    expect(isInWindow(at('2025-06-07T10:00:00Z'), 'Europe/Paris', weekdays)).toBe(false); // Saturday
    // The same instant is inside the window in one zone and outside it in another.
    expect(isInWindow(at('2025-06-02T14:00:00Z'), 'America/New_York', weekdays)).toBe(true); // 10:00
    expect(isInWindow(at('2025-06-02T14:00:00Z'), 'Asia/Tokyo', weekdays)).toBe(false); // 23:00
    expect(isInWindow(at('2025-06-08T23:59:00Z'), 'UTC', always)).toBe(true); // Sunday, end 24:00
  });

  it('opens next at the start of the next listed day, or stays put when already open', () => {
    const open = at('2025-06-02T10:00:00Z');
    expect(nextWindowOpening(open, 'Europe/Paris', weekdays)).toEqual(open);
    // Monday 07:00 Paris → Monday 09:00 Paris.
    expect(nextWindowOpening(at('2025-06-02T05:00:00Z'), 'Europe/Paris', weekdays).toISOString()).toBe('2025-06-02T07:00:00.000Z');
    // Friday 21:00 Paris → Monday 09:00 Paris.
    expect(nextWindowOpening(at('2025-06-06T19:00:00Z'), 'Europe/Paris', weekdays).toISOString()).toBe('2025-06-09T07:00:00.000Z');
    // Sundays only, asked on a Monday: six days later.
    const sundays = { start: '10:00', end: '12:00', days: [7] };
    expect(nextWindowOpening(at('2025-06-02T12:00:00Z'), 'UTC', sundays).toISOString()).toBe('2025-06-08T10:00:00.000Z');
  });

  it('follows daylight-saving changes of the contact zone', () => {
    const nights = { start: '02:30', end: '04:00', days: [1, 2, 3, 4, 5, 6, 7] };
    // 2025-03-09 in New York: 02:00 EST jumps to 03:00 EDT, so 02:30 does not exist; the window opens at 03:30 EDT.
    expect(nextWindowOpening(at('2025-03-09T05:00:00Z'), 'America/New_York', nights).toISOString()).toBe('2025-03-09T07:30:00.000Z');
    // The day before, 02:30 EST is 07:30Z; the day after, 02:30 EDT is 06:30Z.
    expect(nextWindowOpening(at('2025-03-08T05:00:00Z'), 'America/New_York', nights).toISOString()).toBe('2025-03-08T07:30:00.000Z');
    expect(nextWindowOpening(at('2025-03-10T04:00:00Z'), 'America/New_York', nights).toISOString()).toBe('2025-03-10T06:30:00.000Z');
    // Summer (UTC+2) and winter (UTC+1) in Paris: 09:00 local is 07:00Z and 08:00Z.
    expect(nextWindowOpening(at('2025-07-01T00:00:00Z'), 'Europe/Paris', weekdays).toISOString()).toBe('2025-07-01T07:00:00.000Z');
    expect(nextWindowOpening(at('2025-12-01T00:00:00Z'), 'Europe/Paris', weekdays).toISOString()).toBe('2025-12-01T08:00:00.000Z');
  });

  it('knows IANA zones', () => {
    expect(isValidTimeZone('Europe/Paris')).toBe(true);
    expect(isValidTimeZone('UTC')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });
});

describe('retries', () => {
  it('doubles the backoff per failed attempt, capped at a day', () => {
    expect([1, 2, 3, 4].map((n) => retryDelaySeconds(n, 60))).toEqual([60, 120, 240, 480]);
    expect(retryDelaySeconds(20, 600)).toBe(86_400);
    expect(retryDelaySeconds(3, 200_000)).toBe(200_000); // a base above the cap is kept as is
    expect(retryAt(at('2025-01-01T00:00:00Z'), 2, 30).toISOString()).toBe('2025-01-01T00:01:00.000Z');
  });

  it('completes on an answered call, retries other outcomes until the attempts are spent', () => {
    expect(stateAfterOutcome('completed', 1, 3, 'active')).toBe('completed');
    expect(stateAfterOutcome('completed', 1, 3, 'canceled')).toBe('completed');
    expect(stateAfterOutcome('no_answer', 1, 3, 'active')).toBe('pending');
    expect(stateAfterOutcome('busy', 2, 3, 'paused')).toBe('pending');
    expect(stateAfterOutcome('failed', 3, 3, 'active')).toBe('failed');
    expect(stateAfterOutcome('no_answer', 1, 1, 'active')).toBe('failed');
    expect(stateAfterOutcome('no_answer', 1, 3, 'canceled')).toBe('canceled');
  });

  it('rotates through the numbers, one attempt each', () => {
    const numbers = ['+14155550100', '+14155550101'];
    expect([1, 2, 3].map((n) => numberForAttempt(numbers, n))).toEqual(['+14155550100', '+14155550101', '+14155550100']);
  });

  it('keys every attempt by campaign, contact and attempt number', () => {
    const campaign = crypto.randomUUID();
    const contact = crypto.randomUUID();
    const key = attemptKey(campaign, contact, 2);
    expect(key).toBe(`${campaign}:${contact}:2`);
    expect(parseAttemptKey(key)).toEqual({ campaignId: campaign, contactId: contact, attempt: 2 });
    expect(parseAttemptKey('nope')).toBeNull();
    expect(parseAttemptKey(`${campaign}:${contact}:0`)).toBeNull();
  });
});

describe('simulated dialer outcomes', () => {
  it('draws a stable outcome per key, in the configured proportions', () => {
    const weights = parseOutcomeWeights('completed:0.7,no_answer:0.2,busy:0.1');
    expect(weights).toEqual([
      ['completed', 0.7],
      ['no_answer', 0.2],
      ['busy', 0.1],
    ]);
    expect(pickOutcome(weights, 'k1')).toBe(pickOutcome(weights, 'k1'));
    const counts: Record<string, number> = {};
    for (let i = 0; i < 10_000; i++) {
      const o = pickOutcome(weights, `key-${i}`);
      counts[o] = (counts[o] ?? 0) + 1;
    }
    expect(counts.completed! / 10_000).toBeCloseTo(0.7, 1);
    expect(counts.no_answer! / 10_000).toBeCloseTo(0.2, 1);
    expect(counts.busy! / 10_000).toBeCloseTo(0.1, 1);
    expect(pickOutcome(parseOutcomeWeights('no_answer:1'), 'x')).toBe('no_answer');
  });

  it('refuses an outcome list it cannot read, at start', () => {
    expect(loadConfig({}).DIALER_SIMULATED_OUTCOMES).toBe('completed:0.8,no_answer:0.15,busy:0.05');
    expect(() => loadConfig({ DIALER_SIMULATED_OUTCOMES: 'completed' })).toThrow(ConfigError);
    expect(() => loadConfig({ DIALER_SIMULATED_OUTCOMES: 'answered:1' })).toThrow(/DIALER_SIMULATED_OUTCOMES/);
    expect(() => loadConfig({ DIALER_CALLBACK_SECRET: 'short' })).toThrow(/DIALER_CALLBACK_SECRET/);
  });
});

describe('call-event signature', () => {
  it('accepts only sha256=<hex HMAC> of the exact raw body', () => {
    const secret = 'a-long-enough-secret';
    const body = '{"idempotency_key":"k","status":"completed"}';
    const good = `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
    expect(signBody(secret, body)).toBe(good);
    expect(verifySignature(secret, body, good)).toBe(true);
    expect(verifySignature(secret, `${body} `, good)).toBe(false);
    expect(verifySignature('another-secret-value', body, good)).toBe(false);
    expect(verifySignature(secret, body, good.replace('sha256=', ''))).toBe(false);
    expect(verifySignature(secret, body, '')).toBe(false);
  });
});
