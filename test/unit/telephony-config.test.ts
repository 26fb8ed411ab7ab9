import { describe, expect, it } from 'vitest';
import { AgentConfig } from '../../domain/agent-config';
import { PhoneNumberInput, toE164 } from '../../domain/phone-numbers';
import { ConfigError, loadConfig } from '../../platform/core/config';

// The deployment's telephony configuration and the one phone-number rule (domain/phone-numbers.ts).

const twilio = { DIALER: 'twilio', TWILIO_ACCOUNT_SID: `AC${'a'.repeat(32)}`, TWILIO_AUTH_TOKEN: 'b'.repeat(32) };
const vapi = { DIALER: 'vapi', VAPI_API_KEY: 'k', VAPI_PHONE_NUMBER_ID: 'p', VAPI_WEBHOOK_SECRET: 'vapi-secret-0123456789' };

describe('telephony configuration', () => {
  it('does not allow the simulated dialer unless asked', () => {
    expect(loadConfig({}).DIALER_SIMULATED_ALLOWED).toBe(false);
    expect(loadConfig({ DIALER_SIMULATED_ALLOWED: 'true' }).DIALER_SIMULATED_ALLOWED).toBe(true);
  });

  it("refuses the deployment's own provider account without an https PUBLIC_BASE_URL", () => {
    for (const dialer of [twilio, vapi]) {
      expect(() => loadConfig(dialer)).toThrow(ConfigError);
      expect(() => loadConfig(dialer)).toThrow(/needs PUBLIC_BASE_URL at the service's public https:\/\/ address/);
      expect(() => loadConfig({ ...dialer, PUBLIC_BASE_URL: 'http://calls.example.com' })).toThrow(/PUBLIC_BASE_URL/);
      expect(loadConfig({ ...dialer, PUBLIC_BASE_URL: 'https://calls.example.com' }).DIALER).toBe(dialer.DIALER);
    }
    expect(loadConfig({ DIALER: 'simulated' }).DIALER).toBe('simulated');
  });

  it('paces at one call a second per account and per number unless told otherwise, within bounds', () => {
    expect(loadConfig({})).toMatchObject({ CAMPAIGN_DEFAULT_CALLS_PER_SECOND: 1, CAMPAIGN_DEFAULT_CALLS_PER_SECOND_PER_NUMBER: 1 });
    expect(() => loadConfig({ CAMPAIGN_DEFAULT_CALLS_PER_SECOND: '0' })).toThrow(/CAMPAIGN_DEFAULT_CALLS_PER_SECOND/);
  });
});

describe('phone numbers', () => {
  it.each([
    ['+14155550100', '+14155550100'],
    ['+33612345678', '+33612345678'],
    ['+442071838750', '+442071838750'],
    ['+4915112345678', '+4915112345678'],
  ])('takes %s as %s', (input, stored) => {
    expect(PhoneNumberInput.parse(input)).toBe(stored);
    expect(toE164(input)).toBe(stored);
  });

  it.each([
    ['well shaped, but no region assigns it', '+10000000000'],
    ['too short for its region', '+1415555010'],
    ['an unknown country code', '+999123456789'],
    ['no plus', '14155550100'],
    ['spaces', '+1 415 555 0100'],
  ])('refuses a number %s', (_why, input) => {
    const result = PhoneNumberInput.safeParse(input);
    expect(result.success).toBe(false);
    expect(result.error!.issues).toHaveLength(1);
    expect(toE164(input)).toBeNull();
  });

  it('applies to transfer destinations in the agent configuration', () => {
    const result = AgentConfig.safeParse({ transfer: { rules: [{ condition: 'billing', destination: '+10000000000' }] } });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(['transfer', 'rules', 0, 'destination']);
  });
});
