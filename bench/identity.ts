import type { BenchEnvironment } from './environment';
import { load } from './load';

/**
 * GET /me with an ak_ key against the same with a session JWT, in one run. The ak_ path exchanges the
 * key through the verified-token cache, so Argon2id runs once; the goal is at least 0.9x the session rate.
 */
export async function benchIdentity(env: BenchEnvironment, seconds: number) {
  const session = await env.deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: 'bench-org',
    org_ids: ['bench-org'],
    permissions: ['api:read', 'api:manage'],
  });
  const created = await fetch(`${env.baseUrl}/organization-pats`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${session}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  }).then((r) => r.json() as Promise<{ pat_key: string }>);

  const url = `${env.baseUrl}/me`;
  // Warm both paths (JIT, cache) before measuring.
  await load(url, { headers: { Authorization: `Bearer ${session}` }, seconds: 2 });
  await load(url, { headers: { Authorization: `Bearer ${created.pat_key}` }, seconds: 2 });
  const sessionRun = await load(url, { headers: { Authorization: `Bearer ${session}` }, seconds });
  const keyRun = await load(url, { headers: { Authorization: `Bearer ${created.pat_key}` }, seconds });
  return {
    name: 'GET /me: ak_ key vs session JWT (16 connections)',
    session: sessionRun,
    ak_key: keyRun,
    ratio: Number((keyRun.requestsPerSecond / sessionRun.requestsPerSecond).toFixed(2)),
    goal: 'ratio >= 0.9',
  };
}
