import crypto from 'node:crypto';
import autocannon from 'autocannon';

// The attacking side of `npm run bench -- auth-flood`, in a process of its own as a real attacker
// would be (a load generator in the API's own process would measure its own event loop instead):
// `node --import tsx bench/auth-flood-attacker.ts <url> <ak_<key_id>.> <seconds>`; prints JSON.
const [url, keyIdPart, seconds] = process.argv.slice(2) as [string, string, string];
const statuses: Record<string, number> = {};
const result = await autocannon({
  url,
  connections: 64,
  duration: Number(seconds),
  requests: [
    {
      // A new secret and a new X-Forwarded-For address on every request (the API trusts loopback as its
      // proxy), so neither the refused-token memory nor the per-address limits absorb the flood: only the
      // key id's budget for unproven addresses can.
      setupRequest: (request) => ({
        ...request,
        headers: {
          ...request.headers,
          authorization: `Bearer ${keyIdPart}${crypto.randomBytes(32).toString('base64url')}`,
          'x-forwarded-for': `10.${crypto.randomInt(256)}.${crypto.randomInt(256)}.${crypto.randomInt(256)}`,
        },
      }),
      onResponse: (status) => {
        statuses[status] = (statuses[status] ?? 0) + 1;
      },
    },
  ],
});
process.stdout.write(JSON.stringify({ requestsPerSecond: Math.round(result.requests.average), statuses }));
