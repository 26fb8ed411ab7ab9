import crypto from 'node:crypto';

// Vapi authenticates its server messages with the secret set on the assistant's server
// (`server.secret`), sent back verbatim in the `x-vapi-secret` header. Compared in constant time, on
// digests so the length of the secret leaks nothing either.

export function verifyVapiSecret(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = crypto.createHash('sha256').update(expected).digest();
  const b = crypto.createHash('sha256').update(given).digest();
  return crypto.timingSafeEqual(a, b);
}
