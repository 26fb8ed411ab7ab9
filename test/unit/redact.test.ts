import { describe, expect, it } from 'vitest';
import { REDACTED, redactSecrets, stringsIn } from '../../platform/core/redact';

const SECRET = 'Echo/S3cret+z9=w&q"ü';
const ID = 'client-1';
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('redactSecrets', () => {
  it('removes every encoding a request gives a secret, wherever it sits', () => {
    const echoes = [
      SECRET,
      encodeURIComponent(SECRET),
      encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
      new URLSearchParams({ client_secret: SECRET }).toString(),
      JSON.stringify({ client_secret: SECRET }),
      JSON.stringify({ body: `client_secret=${encodeURIComponent(SECRET)}` }),
      `Basic ${b64(`${ID}:${SECRET}`)}`,
      `Basic ${b64(`${encodeURIComponent(ID)}:${encodeURIComponent(SECRET)}`)}`,
      Buffer.from(`x${SECRET}yz`).toString('base64url'),
      // Inside a longer base64 run whose start is not the secret's group.
      `token=${b64(`some prefix of any length: ${SECRET} and more`)}`,
    ];
    for (const echo of echoes) {
      const out = redactSecrets(`Rejected: ${echo} (end)`, [SECRET]);
      expect(out, echo).toContain(REDACTED);
      expect(out, echo).toMatch(/^Rejected: .*\(end\)$/);
      for (const form of [SECRET, encodeURIComponent(SECRET), b64(SECRET).slice(0, 12), 'S3cret']) expect(out, echo).not.toContain(form);
    }
  });

  it('leaves text without a secret alone, and ignores values too short to be secrets', () => {
    const text = 'Token endpoint answered 400 (invalid_grant: The refresh token is invalid or expired)';
    expect(redactSecrets(text, [SECRET, 'abc', ''])).toBe(text);
  });

  it('collects every string of a nested value', () => {
    expect(stringsIn({ a: 'x', b: [1, 'y', { c: 'z' }], d: null })).toEqual(['x', 'y', 'z']);
  });
});
