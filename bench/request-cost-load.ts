import autocannon from 'autocannon';

// The load generator of `npm run bench -- request-cost`, in a process of its own so neither server shares
// an event loop with it: `node --import tsx bench/request-cost-load.ts <url> <seconds> <connections>` with
// the bearer token in REQUEST_COST_TOKEN (not on the command line); prints one JSON line. An optional fourth
// argument paces the requests at that many a second in all (none: as fast as the server answers).
const [url, seconds, connections, rate] = process.argv.slice(2) as [string, string, string, string?];
const token = process.env.REQUEST_COST_TOKEN;
const result = await autocannon({
  url,
  headers: token ? { authorization: `Bearer ${token}` } : {},
  connections: Number(connections),
  duration: Number(seconds),
  ...(rate ? { overallRate: Number(rate) } : {}),
});
process.stdout.write(
  `${JSON.stringify({
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  })}\n`,
);
