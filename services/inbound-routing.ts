import type { Db } from '../db/client';
import * as routing from '../db/inbound-routing';
import type { RoutedNumberRow } from '../db/inbound-routing';
import { unavailable, upstream } from '../domain/errors';
import { ProviderError } from '../platform/adapters/dialers/http';
import { telephonyAccount, type TelephonyAccount } from '../platform/adapters/dialers/provisioning';
import type { ServiceDeps } from './deps';
import { telephonyOf } from './integrations/telephony-accounts';

// A number with an inbound agent is pointed at the service at its provider; one that no agent answers
// any more gets back what it pointed at before (docs/decisions/telephony.md). This runs inside the
// transaction that moves the numbers, after they are moved and locked: a provider that fails or does not
// answer undoes what this run changed there and rolls the transaction back (502), so the inventory and the
// provider never disagree on a committed change. A statement is written after each provider request, so the
// transaction is never idle longer than one request (DIALER_PROVIDER_TIMEOUT_MS).

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'logger'>;

/** How many numbers are asked about at once. */
const AT_ONCE = 4;

interface Done {
  row: RoutedNumberRow;
  action: 'routed' | 'restored';
  previous: Record<string, unknown> | null;
}

/** The provider account the organization's numbers are pointed through; 503 when it has none usable. */
async function accountOf(deps: Deps, orgId: string, provider: string): Promise<TelephonyAccount> {
  const telephony = await telephonyOf(deps, orgId);
  const account = telephony.kind === 'account' ? telephonyAccount(deps.config, telephony.account) : null;
  if (!account || account.provider !== provider)
    throw unavailable(
      telephony.kind === 'none'
        ? `No usable telephony account: ${telephony.reason}`
        : `The number was imported from ${provider}, which is not the organization's telephony account now`,
    );
  return account;
}

/**
 * Brings the provider in line with the inventory for the numbers `ids` of the organization, in `tx`.
 * Returns the numbers it pointed at the service and those it put back.
 */
export async function syncInboundRouting(deps: Deps, tx: Db, orgId: string, ids: string[]) {
  const rows = await routing.numbersOutOfRoute(tx, orgId, ids);
  if (rows.length === 0) return { routed: [] as string[], restored: [] as string[] };
  const accounts = new Map<string, TelephonyAccount>();
  for (const provider of new Set(rows.map((r) => r.provider!))) accounts.set(provider, await accountOf(deps, orgId, provider));

  const done: Done[] = [];
  let failure: unknown = null;
  let next = 0;
  const work = async () => {
    while (failure === null && next < rows.length) {
      const row = rows[next++]!;
      const account = accounts.get(row.provider!)!;
      try {
        if (row.inbound_agent_id) {
          let kept: Record<string, unknown> | null = row.routed_previous;
          await account.routing.routeNumber(row.provider_number_id!, async (previous) => {
            kept = previous ?? kept;
            await routing.keepPrevious(tx, row.id, previous);
          });
          done.push({ row, action: 'routed', previous: kept });
          await routing.markRouted(tx, row.id);
        } else {
          await account.routing.restoreNumber(row.provider_number_id!, row.routed_previous);
          done.push({ row, action: 'restored', previous: row.routed_previous });
          await routing.markRestored(tx, row.id);
        }
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, rows.length) }, work));
  if (failure !== null) {
    await undo(deps, accounts, done);
    if (failure instanceof ProviderError) throw upstream(`The telephony provider failed: ${failure.message}`);
    throw failure;
  }
  return {
    routed: done.filter((d) => d.action === 'routed').map((d) => d.row.number),
    restored: done.filter((d) => d.action === 'restored').map((d) => d.row.number),
  };
}

/** Takes back what a failed run changed at the provider; what cannot be is logged (the next change of the number retries it). */
async function undo(deps: Deps, accounts: Map<string, TelephonyAccount>, done: Done[]): Promise<void> {
  for (const d of done) {
    const account = accounts.get(d.row.provider!)!;
    try {
      if (d.action === 'routed') await account.routing.restoreNumber(d.row.provider_number_id!, d.previous);
      else await account.routing.routeNumber(d.row.provider_number_id!, async () => {});
    } catch (error) {
      deps.logger.warn({ err: error, number_id: d.row.id }, 'A number was left as the failed change made it at the provider');
    }
  }
}

/** Before an agent is deleted: its numbers answer nobody and are put back at the provider (502 keeps everything). */
export async function releaseAgentNumbers(deps: Deps, tx: Db, orgId: string, agentId: string): Promise<void> {
  const ids = await routing.releaseInbound(tx, orgId, agentId);
  await syncInboundRouting(deps, tx, orgId, ids);
}

/** Before a number leaves the inventory: put back at the provider; false when the organization has no such number. */
export async function releaseNumberRouting(deps: Deps, tx: Db, orgId: string, id: string): Promise<boolean> {
  if (!(await routing.unanswerNumber(tx, orgId, id))) return false;
  await syncInboundRouting(deps, tx, orgId, [id]);
  return true;
}
