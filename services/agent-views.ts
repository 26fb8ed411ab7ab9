import type { AgentRow } from '../db/agents';
import type { VersionRow } from '../db/agent-versions';
import type { PhoneNumberRow } from '../db/phone-numbers';
import type { AgentConfig, InstructionBuilderInputs } from '../domain/agent-config';
import { isStale } from '../domain/agents';
import { invalid } from '../domain/errors';
import type { z } from 'zod';
import { iso } from './views';

// Rows of the Agents area as the API shows them, and the filter checks its lists share.

export function agentView(row: AgentRow) {
  return {
    id: row.id,
    organization_id: row.org_id,
    name: row.name,
    description: row.description,
    active: row.active,
    is_demo: row.is_demo,
    metadata: row.metadata,
    published_version: row.published_version,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
  };
}

export function instructionsState(row: VersionRow) {
  return {
    generating: row.instructions_generating,
    dirty: row.instructions_dirty,
    manually_edited: row.instructions_manually_edited,
    stale: isStale(row),
    generated_at: iso(row.instructions_generated_at),
    error: row.instructions_error,
  };
}

export function versionView(row: VersionRow) {
  return {
    id: row.id,
    agent_id: row.agent_id,
    version: row.version,
    config: row.config as z.input<typeof AgentConfig>,
    instruction_builder_inputs: row.instruction_builder_inputs as z.input<typeof InstructionBuilderInputs> | null,
    published: row.published,
    published_at: iso(row.published_at),
    instructions: instructionsState(row),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
  };
}

/** A number of the inventory; `versions`: the published version of each agent (who answers it, and with what). */
export function phoneNumberView(row: PhoneNumberRow, versions: Map<string, number | null> = new Map()) {
  const routed = (row as PhoneNumberRow & { routed_at?: Date | null }).routed_at;
  return {
    id: row.id,
    organization_id: row.org_id,
    number: row.number,
    label: row.label,
    inbound_agent_id: row.inbound_agent_id,
    inbound_agent_version: row.inbound_agent_id ? (versions.get(row.inbound_agent_id) ?? null) : null,
    inbound_routed: Boolean(routed),
    outbound_agent_id: row.outbound_agent_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
  };
}

export const toBool = (v: 'true' | 'false' | undefined) => (v === undefined ? undefined : v === 'true');

/** A JSON-object query parameter (the metadata filter); anything else is a 400. */
export function jsonObjectFilter(name: string, raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw invalid(`Invalid ${name} filter: not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`Invalid ${name} filter: must be a JSON object`);
  return value as Record<string, unknown>;
}
