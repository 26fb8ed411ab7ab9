import path from 'node:path';
import postgres from 'postgres';
import { migrate } from '../../db/migrate';
import { startEmbeddedPostgres } from '../../dev-servers/embedded-postgres';
import { freePort } from '../../dev-servers/ports';

/** A throwaway embedded Postgres under `dir` with a migrated `bench` database, without the API the assistants' benches do not need. */
export async function startAssistantsDatabase(dir: string) {
  const pg = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: await freePort() });
  const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
  await admin.unsafe('CREATE DATABASE bench');
  await admin.end();
  const databaseUrl = pg.urlFor('bench');
  await migrate(databaseUrl);
  return { pg, databaseUrl };
}
