import * as contacts from '../../db/campaign-contacts';
import * as campaigns from '../../db/campaigns';
import type { ConcurrencySettingsRow } from '../../db/campaigns';
import type { Config } from '../../platform/core/config';
import { dispatcherWorkflowId, wakeDispatcherSignal } from '../../workflows/campaign-messages';
import type { ServiceDeps } from '../deps';
import { iso } from '../views';
import { signalWorkflow } from '../workflow-client';
import { pacingOf } from './pacing';

// The organization's call concurrency: how many calls its dispatcher keeps in flight, and how fast it starts
// them (services/campaigns/pacing.ts).

/** The organization's own limit, else the deployment's default. */
export const concurrencyLimit = (config: Pick<Config, 'CAMPAIGN_DEFAULT_CONCURRENCY'>, settings: ConcurrencySettingsRow | undefined) =>
  settings?.concurrency_limit ?? config.CAMPAIGN_DEFAULT_CONCURRENCY;

async function settingsView(deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string) {
  const [row, active] = await Promise.all([campaigns.findConcurrencySettings(deps.sql, orgId), contacts.inFlightCount(deps.sql, orgId)]);
  return {
    organization_id: orgId,
    concurrency_limit: concurrencyLimit(deps.config, row),
    calls_per_second: pacingOf(deps.config, row).callsPerSecond,
    calls_per_second_per_number: pacingOf(deps.config, row).callsPerSecondPerNumber,
    active,
    created_at: iso(row?.created_at ?? null),
    updated_at: iso(row?.updated_at ?? null),
    created_by: row?.created_by ?? null,
    modified_by: row?.modified_by ?? null,
  };
}

export const getConcurrencySettings = (deps: Pick<ServiceDeps, 'sql' | 'config'>, orgId: string) => settingsView(deps, orgId);

export async function putConcurrencySettings(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal' | 'logger'>,
  orgId: string,
  actor: string,
  input: { concurrency_limit: number; calls_per_second?: number; calls_per_second_per_number?: number },
) {
  await campaigns.upsertConcurrencySettings(deps.sql, orgId, input.concurrency_limit, actor, input);
  // Best effort: a running dispatcher re-reads the limit on its next cycle anyway.
  await signalWorkflow(deps, dispatcherWorkflowId(orgId), wakeDispatcherSignal).catch((err: unknown) =>
    deps.logger.debug({ err }, 'no dispatcher to wake'),
  );
  return settingsView(deps, orgId);
}
