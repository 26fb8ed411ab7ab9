import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchEnvironment } from './environment';
import { load } from './load';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ATTACKING_CONNECTIONS = 8;

/**
 * Unauthenticated 48 MB bodies to a custom-data replace (8 connections from another process:
 * bench/body-flood-attacker.ts) while a signed-in client lists tags. Authentication comes before the
 * body is read, so each attack costs a 401 and a closed connection, not a read and a JSON parse; the
 * goal is the tag list's p99 within 2x of its p99 without the flood.
 */
export async function benchBodyFlood(env: BenchEnvironment, seconds: number) {
  const session = await env.deps.devIdp!.sign({
    sub: 'bench-user',
    org_id: 'bench-org',
    org_ids: ['bench-org'],
    permissions: ['api:read', 'api:manage'],
  });
  const url = `${env.baseUrl}/tags`;
  const reader = { headers: { Authorization: `Bearer ${session}` }, connections: 4 };
  await load(url, { ...reader, seconds: 2 }); // warm-up: JIT, the verified-token cache
  // CPU of this process (the API, and the reading client in both phases) per second of each phase.
  const cpuPerSecond = async <T>(run: () => Promise<T>) => {
    const before = process.cpuUsage();
    const result = await run();
    const used = process.cpuUsage(before);
    return { result, cpuMsPerSecond: Math.round((used.user + used.system) / 1000 / seconds) };
  };
  const quiet = await cpuPerSecond(() => load(url, { ...reader, seconds }));

  const attacker = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(HERE, 'body-flood-attacker.ts'), env.baseUrl, String(ATTACKING_CONNECTIONS), String(seconds + 3)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let report = '';
  attacker.stdout!.on('data', (d) => (report += String(d)));
  const attackDone = new Promise<void>((resolve) => attacker.once('exit', () => resolve()));
  await new Promise((r) => setTimeout(r, 2000)); // the attacker builds its body and connects
  const underAttack = await cpuPerSecond(() => load(url, { ...reader, seconds }));
  await attackDone;
  return {
    name: `GET /tags while ${ATTACKING_CONNECTIONS} connections send unauthenticated 48 MB bodies to a custom-data replace`,
    without_attack: { ...quiet.result, apiProcessCpuMsPerSecond: quiet.cpuMsPerSecond },
    under_attack: { ...underAttack.result, apiProcessCpuMsPerSecond: underAttack.cpuMsPerSecond },
    p99_ratio: Number((underAttack.result.p99Ms / Math.max(1, quiet.result.p99Ms)).toFixed(2)),
    attack: JSON.parse(report) as unknown,
    goal: 'p99 under attack <= 2x p99 without',
  };
}
