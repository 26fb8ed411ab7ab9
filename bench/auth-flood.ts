import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchEnvironment, type BenchEnvironment } from './environment';
import { load, type LoadResult } from './load';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * A wrong-secret flood against a real key id (64 connections from another process, a new secret and a
 * new X-Forwarded-For address on every request: bench/auth-flood-attacker.ts; loopback is the trusted
 * proxy that forwards them) while a legitimate client reads with the right key. The legitimate client's p50/p99 are compared
 * with the same run without the flood; the goal is p99 within 2x.
 */
export async function benchAuthFlood(seconds: number) {
  const runs: Record<string, unknown> = {};
  // As configured by default, then with the failure limits and the refused-token memory off: what the
  // bound on concurrent Argon2id work alone achieves.
  for (const [name, env] of [
    ['defaults', {}],
    [
      'limits off, hash bound only',
      {
        AUTH_FAILURES_PER_KEY: '100000',
        AUTH_FAILURES_PER_ADDRESS: '100000',
        AUTH_UNPROVEN_FAILURES_PER_KEY: '1000000',
        AUTH_NEGATIVE_CACHE_SECONDS: '0',
      },
    ],
  ] as const) {
    const env_ = await startBenchEnvironment({ TRUSTED_PROXIES: '127.0.0.1', ...env });
    try {
      runs[name] = await floodRun(env_, seconds);
    } finally {
      await env_.close();
    }
  }
  return {
    name: 'legitimate reads during a wrong-secret flood on the same key id (64 attacking connections)',
    runs,
    goal: 'p99 under attack <= 2x p99 without',
  };
}

async function floodRun(env: BenchEnvironment, seconds: number) {
  const session = await env.deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: 'bench-org',
    org_ids: ['bench-org'],
    permissions: ['api:read', 'api:manage'],
  });
  const created = await fetch(`${env.baseUrl}/organization-pats`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scopes: ['api:read'] }),
  }).then((r) => r.json() as Promise<{ pat_key: string }>);
  const keyIdPart = created.pat_key.slice(0, created.pat_key.indexOf('.') + 1);

  const url = `${env.baseUrl}/accounts?limit=20`;
  const legit = { headers: { Authorization: `Bearer ${created.pat_key}` }, connections: 4 };
  await load(url, { ...legit, seconds: 2 }); // warm-up: JIT, the verified-token cache
  const quiet = await load(url, { ...legit, seconds });

  const verificationsBefore = env.deps.verifier.stats.secretVerifications;
  const attacker = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(HERE, 'auth-flood-attacker.ts'), `${env.baseUrl}/me`, keyIdPart, String(seconds + 2)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let report = '';
  attacker.stdout!.on('data', (d) => (report += String(d)));
  const attackDone = new Promise<void>((resolve) => attacker.once('exit', () => resolve()));
  // The flood is on (past the attacker's start-up) before the measurement starts.
  const deadline = Date.now() + 15_000;
  while (env.deps.verifier.stats.secretVerifications === verificationsBefore && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 500));
  const underAttack: LoadResult = await load(url, { ...legit, seconds });
  await attackDone;
  const flood = JSON.parse(report) as { requestsPerSecond: number; statuses: Record<string, number> };
  return {
    without_attack: quiet,
    under_attack: underAttack,
    p99_ratio: Number((underAttack.p99Ms / Math.max(1, quiet.p99Ms)).toFixed(2)),
    attack: { ...flood, argon2id_runs: env.deps.verifier.stats.secretVerifications - verificationsBefore },
  };
}
