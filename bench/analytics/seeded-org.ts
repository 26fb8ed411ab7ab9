import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeReaderPools, setDerivedReaderPassword } from '../../db/analytics-assistant';
import { type Sql, createSql } from '../../db/client';
import { type Config, loadConfig } from '../../platform/core/config';
import { newId } from '../../platform/core/ids';
import { declareTable, writeRows } from '../../services/custom-data';
import { startAssistantsDatabase } from '../assistants/database';
import { ORDERS_DECLARATION, goldenOrders, seedGoldenCrm } from './golden-set';

export interface SeededOrg {
  deps: { sql: Sql; config: Config };
  orgId: string;
  /** The organization's custom-data view of `orders` (what `ORDERS` stands for in a gold statement). */
  ordersView: string;
}

/**
 * The accuracy benches' organization: a fresh embedded Postgres, the reader role's password, the seeded CRM
 * (`seedGoldenCrm`) and the custom table `orders`; everything is removed after `run`.
 */
export async function withSeededOrg<T>(name: string, run: (org: SeededOrg) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vcrm-${name}-`));
  fs.chmodSync(dir, 0o755);
  const { pg, databaseUrl } = await startAssistantsDatabase(dir);
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: dir, LOG_LEVEL: 'silent', ANALYTICS_DATABASE_URL: '' });
  const sql = createSql(databaseUrl, 5);
  const deps = { sql, config };
  try {
    await setDerivedReaderPassword(sql, config);
    const orgId = newId();
    await sql`INSERT INTO organizations (id, external_id) VALUES (${orgId}, ${`bench-${name}`})`;
    await seedGoldenCrm(sql, orgId);
    const table = await declareTable(deps, orgId, 'bench', 'orders', ORDERS_DECLARATION);
    await writeRows(deps, orgId, 'orders', goldenOrders(), 'replace');
    return await run({ deps, orgId, ordersView: String((table as { view: string }).view) });
  } finally {
    await closeReaderPools();
    await sql.end({ timeout: 5 });
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
