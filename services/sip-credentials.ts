import crypto from 'node:crypto';

// The username and password a SIP client answers the provider's digest challenge with: made here, shown
// once in the deploy's answer and never stored (the provider keeps its own hash). They fit both
// providers' rules: Twilio's username up to 32 characters and password of 12 or more with upper and lower
// case and a digit; Vapi's of 20 to 40 characters each.

export interface SipCredentials {
  username: string;
  password: string;
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = LOWER.toUpperCase();
const DIGITS = '0123456789';

const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[crypto.randomInt(alphabet.length)]).join('');

export function sipCredentials(): SipCredentials {
  const username = `agent${pick(LOWER + DIGITS, 19)}`;
  // Each class at least once; 32 characters of base62 otherwise (about 190 bits).
  const password = pick(UPPER, 1) + pick(LOWER, 1) + pick(DIGITS, 1) + pick(UPPER + LOWER + DIGITS, 29);
  return { username, password };
}
