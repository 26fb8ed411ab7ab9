import type { DomainStatus, RecordPurpose, RecordStatus } from '../../domain/outreach/domains';
import type { Db } from '../client';
import { keysetPage } from '../kit/keyset';
import { onUnique } from '../kit/unique';

// SQL only: every function takes (db, orgId, ...ids) and filters by org_id.

export interface DomainRow {
  id: string;
  org_id: string;
  name: string;
  source: 'owned' | 'purchased';
  registrar: string | null;
  registrar_order_id: string | null;
  price_cents: number | null;
  currency: string | null;
  registered_until: Date | null;
  status: DomainStatus;
  dkim_selector: string;
  dkim_public_key: string;
  dkim_credential_id: string | null;
  tracking_host: string;
  /** Open and click tracking: its tracking CNAME is required only while on. */
  tracking_enabled: boolean;
  last_verified_at: Date | null;
  verified_at: Date | null;
  created_by: string;
  created_at: Date;
  updated_at: Date;
}

export interface DomainRecordRow {
  org_id: string;
  domain_id: string;
  purpose: RecordPurpose;
  type: 'TXT' | 'CNAME';
  host: string;
  value: string;
  status: RecordStatus;
  found: string[] | null;
  checked_at: Date | null;
}

export type DomainInsert = Omit<
  DomainRow,
  'org_id' | 'status' | 'last_verified_at' | 'verified_at' | 'created_at' | 'updated_at' | 'tracking_enabled'
> & { tracking_enabled?: boolean };

const DUPLICATE = 'The organization already has this domain';

export async function insertDomain(db: Db, orgId: string, values: DomainInsert): Promise<DomainRow> {
  const [row] = await onUnique(db<DomainRow[]>`INSERT INTO outreach_domains ${db({ ...values, org_id: orgId })} RETURNING *`, DUPLICATE);
  return row!;
}

export async function insertRecords(
  db: Db,
  orgId: string,
  domainId: string,
  records: Pick<DomainRecordRow, 'purpose' | 'type' | 'host' | 'value'>[],
): Promise<void> {
  const rows = records.map((r) => ({ ...r, org_id: orgId, domain_id: domainId }));
  await db`INSERT INTO outreach_domain_records ${db(rows, 'org_id', 'domain_id', 'purpose', 'type', 'host', 'value')}`;
}

export async function findByName(db: Db, orgId: string, name: string): Promise<DomainRow | undefined> {
  const [row]: [DomainRow?] = await db`SELECT * FROM outreach_domains WHERE org_id = ${orgId} AND name = ${name}`;
  return row;
}

export async function getDomain(db: Db, orgId: string, domainId: string, options: { lock?: boolean } = {}): Promise<DomainRow | undefined> {
  const lock = options.lock ? db`FOR UPDATE` : db``;
  const [row]: [DomainRow?] = await db`SELECT * FROM outreach_domains WHERE org_id = ${orgId} AND id = ${domainId} ${lock}`;
  return row;
}

/** The records of some domains, in a fixed order of purposes. */
export async function recordsOf(db: Db, orgId: string, domainIds: string[]): Promise<DomainRecordRow[]> {
  if (domainIds.length === 0) return [];
  return db<DomainRecordRow[]>`
    SELECT * FROM outreach_domain_records WHERE org_id = ${orgId} AND domain_id = ANY(${domainIds}::uuid[])
    ORDER BY domain_id, array_position(ARRAY['spf', 'dkim', 'dmarc', 'tracking'], purpose)`;
}

export async function listDomains(
  db: Db,
  orgId: string,
  filters: { status?: DomainStatus },
  page: { limit: number; after?: { t: string; id: string } },
): Promise<{ rows: (DomainRow & { cursor_t: string })[]; total: number }> {
  const status = filters.status ? db`AND status = ${filters.status}` : db``;
  return keysetPage<DomainRow>(db, { select: db`*`, from: db`outreach_domains`, where: db`org_id = ${orgId} ${status}`, ...page });
}

export async function updateRecordStatus(
  db: Db,
  orgId: string,
  domainId: string,
  purpose: RecordPurpose,
  result: { status: RecordStatus; found: string[] | null },
): Promise<void> {
  await db`
    UPDATE outreach_domain_records SET status = ${result.status}, found = ${result.found}, checked_at = now()
    WHERE org_id = ${orgId} AND domain_id = ${domainId} AND purpose = ${purpose}`;
}

export async function setDomainStatus(db: Db, orgId: string, domainId: string, status: DomainStatus): Promise<DomainRow | undefined> {
  const [row]: [DomainRow?] = await db`
    UPDATE outreach_domains SET status = ${status}, last_verified_at = now(), updated_at = now(),
      verified_at = CASE WHEN ${status} = 'verified' THEN coalesce(verified_at, now()) ELSE verified_at END
    WHERE org_id = ${orgId} AND id = ${domainId} RETURNING *`;
  return row;
}

/** Switches tracking; `status` (when the domain was verified before) is its status judged again from the stored record statuses. */
export async function setTracking(
  db: Db,
  orgId: string,
  domainId: string,
  enabled: boolean,
  status: DomainStatus | null,
): Promise<DomainRow | undefined> {
  const [row]: [DomainRow?] = await db`
    UPDATE outreach_domains SET tracking_enabled = ${enabled}, updated_at = now(),
      status = coalesce(${status}::text, status),
      verified_at = CASE WHEN ${status}::text = 'verified' THEN coalesce(verified_at, now()) ELSE verified_at END
    WHERE org_id = ${orgId} AND id = ${domainId} RETURNING *`;
  return row;
}

export async function countMailboxesOn(db: Db, orgId: string, domainId: string): Promise<number> {
  const [row] = await db<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM outreach_mailboxes WHERE org_id = ${orgId} AND domain_id = ${domainId}`;
  return row!.n;
}

export async function deleteDomain(db: Db, orgId: string, domainId: string): Promise<DomainRow | undefined> {
  const [row]: [DomainRow?] = await db`DELETE FROM outreach_domains WHERE org_id = ${orgId} AND id = ${domainId} RETURNING *`;
  return row;
}
