import crypto from 'node:crypto';

// Twilio's request signature (X-Twilio-Signature): base64 HMAC-SHA1, keyed by the account's auth token,
// of the full URL Twilio requested followed by each POST parameter's name and value, names sorted.
// The official `twilio` package's validateRequest does the same; it pulls in an HTTP client and a JWT
// library this service has no other use for, so the documented algorithm is written out here and
// checked against Twilio's own published example (test/unit/telephony-signatures.test.ts).

/** The signature Twilio sends for a POST of `params` to `url`. */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, name) => acc + name + params[name], url);
  return crypto.createHmac('sha1', authToken).update(Buffer.from(data, 'utf-8')).digest('base64');
}

const sameText = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
};

/** The URL with its scheme's default port written out, or left out (Twilio may sign either form). */
function portVariants(url: string): string[] {
  const parsed = new URL(url);
  const defaultPort = parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '';
  if (!defaultPort || (parsed.port && parsed.port !== defaultPort)) return [url];
  const withPort = `${parsed.protocol}//${parsed.username ? `${parsed.username}:${parsed.password}@` : ''}${parsed.hostname}:${defaultPort}${parsed.pathname}${parsed.search}`;
  const without = `${parsed.protocol}//${parsed.username ? `${parsed.username}:${parsed.password}@` : ''}${parsed.hostname}${parsed.pathname}${parsed.search}`;
  return [url, withPort, without];
}

/** True when `signature` is Twilio's for this request, compared in constant time. */
export function verifyTwilioSignature(authToken: string, signature: string, url: string, params: Record<string, string>): boolean {
  if (!signature) return false;
  return portVariants(url).some((u) => sameText(twilioSignature(authToken, u, params), signature));
}
