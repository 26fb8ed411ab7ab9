import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import * as credentials from '../../db/credentials';
import * as domains from '../../db/outreach/domains';
import type { DomainRecordRow, DomainRow } from '../../db/outreach/domains';
import { conflict, invalid, notFound, upstream } from '../../domain/errors';
import {
  DKIM_SELECTOR,
  isRecordRequired,
  judgeRecord,
  requiredStatusOf,
  normalizeDomain,
  requiredRecords,
  type DomainStatus,
  type Lookup,
  type RequiredRecord,
} from '../../domain/outreach/domains';
import { createDnsResolver, type DnsResolver } from '../../platform/core/dns-resolver';
import { newId } from '../../platform/core/ids';
import { RegistrarError, createRegistrar } from '../../platform/adapters/registrars/registrar';
import type { ServiceDeps } from '../deps';
import { storeOutreachSecret } from './mailbox-secrets';
import { iso } from '../views';
import { CreatedCursor, cursorPage, decodeCursor } from '../pagination';

// Sending domains: added (owned) or bought through the registrar, each with a fresh DKIM key pair
// (private key sealed in a workflow credential, never returned) and the DNS records to publish; a
// verification run resolves each record and stores its status.

const domainNotFound = () => notFound('Domain not found');
const generateRsa = promisify(generateKeyPair);

export function domainView(row: DomainRow, records: DomainRecordRow[]) {
  return {
    id: row.id,
    organization_id: row.org_id,
    name: row.name,
    source: row.source,
    registrar: row.registrar,
    registrar_order_id: row.registrar_order_id,
    price_cents: row.price_cents,
    currency: row.currency,
    registered_until: iso(row.registered_until),
    status: row.status,
    dkim_selector: row.dkim_selector,
    tracking_enabled: row.tracking_enabled,
    records: records.map((r) => ({
      purpose: r.purpose,
      type: r.type,
      host: r.host,
      value: r.value,
      required: isRecordRequired(r.purpose, row.tracking_enabled),
      status: r.status,
      found: r.found,
      checked_at: iso(r.checked_at),
    })),
    last_verified_at: iso(row.last_verified_at),
    verified_at: iso(row.verified_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
  };
}

async function view(deps: Pick<ServiceDeps, 'sql'>, orgId: string, row: DomainRow) {
  return domainView(row, await domains.recordsOf(deps.sql, orgId, [row.id]));
}

/** An RSA 2048 key pair: the public key as base64 DER (what a DKIM record's p= holds), the private key as PEM. */
async function dkimKeyPair(): Promise<{ publicKey: string; privateKeyPem: string }> {
  const { publicKey, privateKey } = await generateRsa('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: (publicKey as unknown as Buffer).toString('base64'), privateKeyPem: privateKey as unknown as string };
}

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;
type Purchase = { registrar: string; orderId: string; priceCents: number; currency: string; registeredUntil: Date };

/** The row, its records and its DKIM credential in one transaction; `buy` runs inside it, last, so a refused purchase writes nothing. */
async function createDomain(
  deps: Deps,
  orgId: string,
  actor: string,
  name: string,
  buy?: () => Promise<Purchase>,
  trackingEnabled = false,
) {
  if (await domains.findByName(deps.sql, orgId, name)) throw conflict('The organization already has this domain');
  const keys = await dkimKeyPair();
  const id = newId();
  const records = requiredRecords(name, keys.publicKey, deps.config.OUTREACH_TRACKING_HOST);
  return deps.sql.begin(async (tx) => {
    const credentialId = await storeOutreachSecret(tx, deps.config, orgId, actor, {
      name: `outreach-domain:${id}:dkim`,
      description: `DKIM private key of ${name} (selector ${DKIM_SELECTOR})`,
      value: { dkim_private_key: keys.privateKeyPem },
    });
    const purchase = buy ? await buy() : undefined;
    const row = await domains.insertDomain(tx, orgId, {
      id,
      name,
      source: purchase ? 'purchased' : 'owned',
      registrar: purchase?.registrar ?? null,
      registrar_order_id: purchase?.orderId ?? null,
      price_cents: purchase?.priceCents ?? null,
      currency: purchase?.currency ?? null,
      registered_until: purchase?.registeredUntil ?? null,
      dkim_selector: DKIM_SELECTOR,
      dkim_public_key: keys.publicKey,
      dkim_credential_id: credentialId,
      tracking_host: records.find((r) => r.purpose === 'tracking')!.host,
      tracking_enabled: trackingEnabled,
      created_by: actor,
    });
    await domains.insertRecords(tx, orgId, id, records);
    return domainView(row, await domains.recordsOf(tx, orgId, [id]));
  });
}

export async function addDomain(deps: Deps, orgId: string, actor: string, input: { name: string; tracking_enabled?: boolean }) {
  return createDomain(deps, orgId, actor, normalizeDomain(input.name), undefined, input.tracking_enabled ?? false);
}

/** Switches open and click tracking; a domain verified before is judged again from its stored record statuses. */
export async function setDomainTracking(deps: Pick<ServiceDeps, 'sql'>, orgId: string, domainId: string, enabled: boolean) {
  const row = await deps.sql.begin(async (tx) => {
    const current = await domains.getDomain(tx, orgId, domainId, { lock: true });
    if (!current) throw domainNotFound();
    const status = current.last_verified_at ? requiredStatusOf(await domains.recordsOf(tx, orgId, [domainId]), enabled) : null;
    return (await domains.setTracking(tx, orgId, domainId, enabled, status))!;
  });
  return view(deps, orgId, row);
}

export async function checkAvailability(deps: Pick<ServiceDeps, 'config'>, name: string) {
  const registrar = createRegistrar(deps.config);
  let quote: Awaited<ReturnType<typeof registrar.check>>;
  try {
    quote = await registrar.check(normalizeDomain(name));
  } catch (error) {
    if (error instanceof RegistrarError) throw upstream(`Registrar ${registrar.name} failed: ${error.message}`);
    throw error;
  }
  return {
    name: quote.domain,
    available: quote.available,
    price_cents: quote.priceCents,
    currency: quote.currency,
    registrar: registrar.name,
  };
}

/** Buys a domain through the registrar (cost-bearing) and adds it like an owned one. */
export async function purchaseDomain(
  deps: Deps,
  orgId: string,
  actor: string,
  input: { name: string; years: number; max_price_cents?: number },
) {
  const name = normalizeDomain(input.name);
  const registrar = createRegistrar(deps.config);
  const result = await createDomain(deps, orgId, actor, name, async () => {
    try {
      const bought = await registrar.purchase(name, { years: input.years, maxPriceCents: input.max_price_cents });
      return { registrar: registrar.name, ...bought };
    } catch (error) {
      if (error instanceof RegistrarError) {
        if (error.reason === 'failed') throw upstream(`Registrar ${registrar.name} failed: ${error.message}`);
        if (error.reason === 'unsupported') throw invalid(error.message);
        throw conflict(error.message);
      }
      throw error;
    }
  });
  deps.logger.info({ orgId, domainId: result.id, registrar: registrar.name, priceCents: result.price_cents }, 'outreach domain purchased');
  return result;
}

export async function listDomains(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { status?: DomainStatus; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, CreatedCursor);
  const { rows, total } = await domains.listDomains(deps.sql, orgId, { status: query.status }, { limit: query.limit, after });
  const records = await domains.recordsOf(
    deps.sql,
    orgId,
    rows.slice(0, query.limit).map((r) => r.id),
  );
  return cursorPage(
    rows,
    query.limit,
    total,
    (last) => ({ t: last.cursor_t, id: last.id }),
    (row) =>
      domainView(
        row,
        records.filter((r) => r.domain_id === row.id),
      ),
  );
}

export async function getDomain(deps: Pick<ServiceDeps, 'sql'>, orgId: string, domainId: string) {
  const row = await domains.getDomain(deps.sql, orgId, domainId);
  if (!row) throw domainNotFound();
  return view(deps, orgId, row);
}

/** Deletes a domain with its records and DKIM key; 409 while mailboxes live on it. */
export async function deleteDomain(deps: Pick<ServiceDeps, 'sql'>, orgId: string, domainId: string): Promise<void> {
  await deps.sql.begin(async (tx) => {
    const row = await domains.getDomain(tx, orgId, domainId, { lock: true });
    if (!row) throw domainNotFound();
    const mailboxes = await domains.countMailboxesOn(tx, orgId, domainId);
    if (mailboxes > 0) throw conflict(`The domain has ${mailboxes} mailbox(es): delete them first`);
    await domains.deleteDomain(tx, orgId, domainId);
    if (row.dkim_credential_id) await credentials.deleteCredential(tx, orgId, row.dkim_credential_id);
  });
}

async function lookup(resolver: DnsResolver, record: RequiredRecord): Promise<Lookup> {
  try {
    return { answers: record.type === 'TXT' ? await resolver.resolveTxt(record.host) : await resolver.resolveCname(record.host) };
  } catch {
    return null;
  }
}

/**
 * A verification run: resolves every record (in parallel, each bounded by OUTREACH_DNS_TIMEOUT_MS),
 * stores each one's status and what was found, and the domain's status (verified when every required one is:
 * the tracking CNAME only while tracking is on).
 */
export async function verifyDomain(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, domainId: string, resolver?: DnsResolver) {
  const row = await domains.getDomain(deps.sql, orgId, domainId);
  if (!row) throw domainNotFound();
  const records = await domains.recordsOf(deps.sql, orgId, [domainId]);
  if (records.length === 0) throw invalid('The domain has no records to verify');
  const dns = resolver ?? createDnsResolver(deps.config);
  const results = await Promise.all(
    records.map(async (r) => {
      const answer = await lookup(dns, r);
      return {
        purpose: r.purpose,
        status: judgeRecord(r, answer),
        found: answer ? answer.answers.slice(0, 10).map((a) => a.slice(0, 2000)) : null,
      };
    }),
  );
  const updated = await deps.sql.begin(async (tx) => {
    const current = await domains.getDomain(tx, orgId, domainId, { lock: true });
    if (!current) throw domainNotFound();
    for (const r of results) await domains.updateRecordStatus(tx, orgId, domainId, r.purpose, { status: r.status, found: r.found });
    return (await domains.setDomainStatus(tx, orgId, domainId, requiredStatusOf(results, current.tracking_enabled)))!;
  });
  return view(deps, orgId, updated);
}
