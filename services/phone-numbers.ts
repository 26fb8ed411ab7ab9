import { publishedVersions } from '../db/inbound-routing';
import * as phoneNumbers from '../db/phone-numbers';
import { notFound, unavailable, upstream } from '../domain/errors';
import { ProviderError } from '../platform/adapters/dialers/http';
import { telephonyAccount, type ProviderNumber } from '../platform/adapters/dialers/provisioning';
import { phoneNumberView, toBool } from './agent-views';
import type { ServiceDeps } from './deps';
import { releaseNumberRouting } from './inbound-routing';
import { telephonyOf } from './integrations/telephony-accounts';
import { NameCursor, cursorPage, decodeCursor } from './pagination';

/** Registers a number in the organization's inventory; a number already there is a 409. */
export async function registerNumber(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  actor: string,
  input: { number: string; label?: string | null },
) {
  return phoneNumberView(await phoneNumbers.insertPhoneNumber(deps.sql, orgId, input.number, input.label ?? null, actor));
}

/** The published versions of the agents answering these numbers. */
async function answeringVersions(deps: Pick<ServiceDeps, 'sql'>, orgId: string, rows: phoneNumbers.PhoneNumberRow[]) {
  const ids = [...new Set(rows.flatMap((r) => (r.inbound_agent_id ? [r.inbound_agent_id] : [])))];
  return publishedVersions(deps.sql, orgId, ids);
}

export async function listNumbers(
  deps: Pick<ServiceDeps, 'sql'>,
  orgId: string,
  query: { agent_id?: string; available?: 'true' | 'false'; limit: number; cursor?: string },
) {
  const after = decodeCursor(query.cursor, NameCursor);
  const { rows, total } = await phoneNumbers.listPhoneNumbers(
    deps.sql,
    orgId,
    { agent_id: query.agent_id, available: toBool(query.available) },
    { limit: query.limit, afterNumber: after?.n },
  );
  const page = cursorPage(rows, query.limit, total, (last) => ({ n: last.number }));
  const versions = await answeringVersions(deps, orgId, page.data);
  return { data: page.data.map((row) => phoneNumberView(row, versions)), pagination: page.pagination };
}

/**
 * Releases a number: it leaves the inventory and stops serving its agents; one pointed at the service
 * gets back what it pointed at before at its provider first (a provider failure is 502 and it stays).
 */
export async function releaseNumber(deps: Pick<ServiceDeps, 'sql' | 'config' | 'logger'>, orgId: string, id: string): Promise<void> {
  const released = await deps.sql.begin(
    async (tx) => (await releaseNumberRouting(deps, tx, orgId, id)) && phoneNumbers.deletePhoneNumber(tx, orgId, id),
  );
  if (!released) throw notFound('Phone number not found');
}

/**
 * Imports the telephony account's numbers (the organization's own, else DIALER=twilio or vapi) into its inventory,
 * upserted by number: a second import changes nothing. 503 with the simulated dialer, 502 when the
 * provider fails or does not answer within DIALER_PROVIDER_TIMEOUT_MS (and then nothing is written).
 */
export async function importNumbers(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string, actor: string) {
  const telephony = await telephonyOf(deps, orgId);
  if (telephony.kind === 'none') throw unavailable(`No usable telephony account: ${telephony.reason}`);
  const account = telephonyAccount(deps.config, telephony.kind === 'account' ? telephony.account : null);
  if (!account)
    throw unavailable(
      'No telephony account: connect one (POST /integrations/telephony-accounts) or set DIALER=twilio or DIALER=vapi to import numbers',
    );
  let listed: ProviderNumber[];
  try {
    listed = await account.listNumbers();
  } catch (error) {
    if (error instanceof ProviderError) throw upstream(`The telephony provider failed: ${error.message}`);
    throw error;
  }
  const unique = [...new Map(listed.map((n) => [n.number, n])).values()];
  const results = await deps.sql.begin((tx) =>
    phoneNumbers.importPhoneNumbers(
      tx,
      orgId,
      account.provider,
      unique.map((n) => ({ number: n.number, provider_number_id: n.provider_id, label: n.label })),
      actor,
    ),
  );
  const count = (result: phoneNumbers.ImportResult) => results.filter((r) => r.result === result).length;
  const versions = await answeringVersions(
    deps,
    orgId,
    results.map((r) => r.row),
  );
  return {
    provider: account.provider,
    imported: count('imported'),
    updated: count('updated'),
    unchanged: count('unchanged'),
    data: results.map(({ row, result }) => ({ ...phoneNumberView(row, versions), provider_number_id: row.provider_number_id!, result })),
  };
}
