import { iso } from '../schemas/common';
import type { z } from 'zod';
import type { AgentRow } from '../../db/agents';
import { isStale, type VersionRow } from '../../db/agent-versions';
import type { PhoneNumberRow } from '../../db/phone-numbers';
import { badRequest } from '../errors';
import type { Agent, AgentVersion, InstructionsState, PhoneNumber } from '../schemas/agents';

// Rows of the Agents area as the API shows them, and the checks its list routes share.


export function agentView(row: AgentRow): z.output<typeof Agent> {
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

export function instructionsState(row: VersionRow): z.output<typeof InstructionsState> {
  return {
    generating: row.instructions_generating,
    dirty: row.instructions_dirty,
    manually_edited: row.instructions_manually_edited,
    stale: isStale(row),
    generated_at: iso(row.instructions_generated_at),
    error: row.instructions_error,
  };
}

export function versionView(row: VersionRow): z.output<typeof AgentVersion> {
  return {
    id: row.id,
    agent_id: row.agent_id,
    version: row.version,
    config: row.config as z.output<typeof AgentVersion>['config'],
    instruction_builder_inputs: row.instruction_builder_inputs as z.output<typeof AgentVersion>['instruction_builder_inputs'],
    published: row.published,
    published_at: iso(row.published_at),
    instructions: instructionsState(row),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
    modified_by: row.modified_by,
  };
}

export function phoneNumberView(row: PhoneNumberRow): z.output<typeof PhoneNumber> {
  return {
    id: row.id,
    organization_id: row.org_id,
    number: row.number,
    label: row.label,
    inbound_agent_id: row.inbound_agent_id,
    outbound_agent_id: row.outbound_agent_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: row.created_by,
  };
}

/** Lists take only the filters they declare: any other query parameter is a 400 naming it. */
export const toBool = (v: 'true' | 'false' | undefined) => (v === undefined ? undefined : v === 'true');

/** A JSON-object query parameter (the metadata filter); anything else is a 400. */
export function jsonObjectFilter(name: string, raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw badRequest(`Invalid ${name} filter: not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`Invalid ${name} filter: must be a JSON object`);
  return value as Record<string, unknown>;
}
