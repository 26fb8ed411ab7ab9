import { getOpenApiMetadata } from '@asteasolutions/zod-to-openapi';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import '../../api/openapi-registry'; // extends zod with .openapi before the schemas load
import { fromZodError } from '../../api/errors';
import { REDACTED_INPUT } from '../../api/secret-fields';
import { CreateCredentialBody, CredentialValue, PutValueBody } from '../../api/schemas/credentials';
import { ExchangeBody } from '../../api/schemas/identity';
import { ConnectMailboxBody } from '../../api/schemas/outreach-mailboxes';

// Fields that carry secret material are never echoed by a 422, whatever the issue and wherever it sits.

const SECRET = 'sk_live_9f8e7d6c5b4a';

function issues(schema: z.ZodType, input: unknown) {
  const result = schema.safeParse(input);
  if (result.success) throw new Error('expected a failure');
  return fromZodError(result.error, 'body', input, schema).issues;
}

const mailbox = (smtp: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  email_address: 'a@acme.test',
  smtp: { host: 'smtp.acme.test', port: 587, secure: false, username: 'a', ...smtp },
  ...extra,
});

describe('a 422 never echoes a secret field', () => {
  it('PUT credential value: a bare string, an array, too many keys are reported without the value', () => {
    for (const value of [SECRET, [SECRET], Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, SECRET]))]) {
      const found = issues(PutValueBody, { value });
      expect(found.length).toBeGreaterThan(0);
      expect(found[0]!.loc).toEqual(['body', 'value']);
      expect(found[0]!.input).toBe(REDACTED_INPUT);
      expect(JSON.stringify(found)).not.toContain(SECRET);
    }
  });

  it('an issue elsewhere that echoes a whole object shows its secret fields redacted, the rest as sent', () => {
    const found = issues(CreateCredentialBody, { name: 'ok', value: { api_key: SECRET }, bogus: { x: 1 } });
    expect(found).toEqual([
      { type: 'extra_forbidden', loc: ['body', 'bogus'], msg: 'Extra inputs are not permitted', input: { x: 1 }, ctx: {} },
    ]);
    // The issue's own value still shows when it is no secret.
    expect(issues(CreateCredentialBody, { name: 7, value: { api_key: SECRET } })[0]).toMatchObject({ loc: ['body', 'name'], input: 7 });
  });

  it('mailbox passwords (SMTP and IMAP) and a token to exchange', () => {
    const cases: [z.ZodType, unknown, (string | number)[]][] = [
      [ConnectMailboxBody, mailbox({ password: 42 }), ['body', 'smtp', 'password']],
      [ConnectMailboxBody, mailbox({ password: `${SECRET}${'x'.repeat(1000)}` }), ['body', 'smtp', 'password']],
      [
        ConnectMailboxBody,
        mailbox({}, { imap: { host: 'imap.acme.test', port: 993, secure: true, password: [SECRET] } }),
        ['body', 'imap', 'password'],
      ],
      [ExchangeBody, { token: [SECRET] }, ['body', 'token']],
    ];
    for (const [schema, input, loc] of cases) {
      const found = issues(schema, input);
      expect(found.map((i) => i.loc)).toContainEqual(loc);
      expect(found.find((i) => JSON.stringify(i.loc) === JSON.stringify(loc))!.input).toBe(REDACTED_INPUT);
      expect(JSON.stringify(found)).not.toContain(SECRET);
    }
    // A whole server block echoed (wrong type of a sibling, a union) keeps its password out.
    const smtpIssue = issues(ConnectMailboxBody, mailbox({ password: SECRET, port: 'x' }));
    expect(JSON.stringify(smtpIssue)).not.toContain(SECRET);
  });

  it('the document marks them writeOnly', () => {
    expect(getOpenApiMetadata(CredentialValue).writeOnly).toBe(true);
    expect(getOpenApiMetadata(ConnectMailboxBody.shape.smtp.shape.password).writeOnly).toBe(true);
    expect(getOpenApiMetadata(ExchangeBody.shape.token).writeOnly).toBe(true);
  });
});
