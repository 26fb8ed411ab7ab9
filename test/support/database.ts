import crypto from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';

/** A fresh database for one test file, copied from the migrated template the global setup made. */
export async function createTestDatabase(): Promise<{ url: string; name: string }> {
  const base = inject('pgUrl');
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}
