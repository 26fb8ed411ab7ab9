import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';

const migrationsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies every pending SQL migration under db/migrations, holding node-pg-migrate's advisory lock. */
export async function migrate(databaseUrl: string, log: (line: string) => void = () => {}): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    checkOrder: true,
    singleTransaction: true,
    log,
    logger: { debug: () => {}, info: log, warn: log, error: log },
  });
  return applied.map((m) => m.name);
}
