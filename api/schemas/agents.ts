import { z } from 'zod';
import { CreatedCursor, CursorPagination, NameCursor, VersionCursor, cursorQuery } from '../pagination';
import { AgentConfig, InstructionBuilderInputs } from '../../domain/agent-config';
import { SIP_PROVISIONING_KINDS, SIP_PROVISIONING_NOTE } from '../../domain/agents';
import { atLeastOneOf, exactlyOneOf } from '../../domain/schema-rules';
import { trimmedText } from '../../domain/trimmed-text';
import { Widget } from './agent-widgets';
import { Uuid, timestampInput } from './common';
import { PhoneNumberInput } from './phone-numbers';

const Bool = z.enum(['true', 'false']);
const Limit = z.coerce.number().int().min(1).max(200).default(50);
const Metadata = z.record(z.string(), z.unknown());
const timeFilters = {
  created_before: timestampInput('Created before this instant').optional(),
  created_after: timestampInput('Created after this instant').optional(),
  updated_before: timestampInput('Last updated before this instant').optional(),
  updated_after: timestampInput('Last updated after this instant').optional(),
};

// Agents

export const AgentCreateBody = z
  .object({
    name: trimmedText(200),
    description: z.string().max(5000).nullable().optional(),
    active: z.boolean().optional(),
    is_demo: z.boolean().optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  .openapi('AgentCreate');

export const AgentUpdateBody = z
  .object({
    name: trimmedText(200).optional(),
    description: z.string().max(5000).nullable().optional(),
    active: z.boolean().optional(),
    is_demo: z.boolean().optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  // An empty body is 400 (nothing to update): the document states that a field is needed.
  .openapi('AgentUpdate', { minProperties: 1 });

export const AgentListQuery = z.object({
  limit: Limit,
  cursor: cursorQuery(CreatedCursor),
  name: z.string().min(1).max(200).optional().openapi({ description: 'case-insensitive substring of the name' }),
  active: Bool.optional(),
  is_demo: Bool.optional(),
  metadata: z
    .string()
    .max(2000)
    .optional()
    .openapi({ description: 'a JSON object; agents whose metadata contains it (@>)', example: '{"team":"sales"}' }),
  ...timeFilters,
});

export const Agent = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    name: z.string(),
    description: z.string().nullable(),
    active: z.boolean(),
    is_demo: z.boolean(),
    metadata: Metadata,
    published_version: z.number().int().nullable().openapi({ description: 'the version its phone numbers and SIP endpoint serve' }),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: z.string().nullable(),
    modified_by: z.string().nullable(),
  })
  .openapi('Agent');

export const AgentList = z.object({ data: z.array(Agent), pagination: CursorPagination }).openapi('AgentList');

export const InstructionsState = z
  .object({
    generating: z.boolean(),
    dirty: z.boolean(),
    manually_edited: z.boolean(),
    stale: z.boolean().openapi({ description: 'dirty and not manually edited; blocks publishing' }),
    generated_at: z.string().nullable(),
    error: z.string().nullable(),
  })
  .openapi('InstructionsState');

const VersionSummary = z.object({
  version: z.number().int(),
  published: z.boolean(),
  published_at: z.string().nullable(),
  instructions: InstructionsState,
  created_at: z.string(),
  updated_at: z.string(),
});

const SipProvider = z.enum(['simulated', 'twilio', 'vapi']);

export const SipState = z
  .object({
    deployed: z.boolean(),
    sip_uri: z.string().nullable().openapi({ description: "the agent's address; with Twilio, at the agent's SIP domain" }),
    deployed_at: z.string().nullable(),
    state: z.enum(['recorded', 'provisioning', 'active']).nullable().openapi({
      description:
        '`recorded`: the address only (no SIP server or provider behind it); `provisioning`: the provider is being asked; `active`: the provider holds the endpoint',
    }),
    provider: SipProvider.nullable().openapi({ description: 'the dialer the endpoint was deployed with' }),
    provider_id: z.string().nullable().openapi({ description: "the provider's id of the endpoint (Twilio's SIP domain sid)" }),
  })
  .openapi('AgentSipState');

export const AgentPhoneNumber = z.object({
  id: Uuid,
  number: z.string(),
  label: z.string().nullable(),
  directions: z.array(z.enum(['inbound', 'outbound'])),
});

export const Statistics = z
  .object({
    conversations_total: z.number().int(),
    conversations_last_30_days: z.number().int(),
    average_duration_seconds: z.number().nullable(),
    last_conversation_at: z.string().nullable(),
  })
  .openapi('AgentStatistics');

export const AgentDetail = Agent.extend({
  versions: z.array(VersionSummary).openapi({ description: 'the newest 100 versions, highest first' }),
  versions_total: z.number().int(),
  phone_numbers: z.array(AgentPhoneNumber),
  widgets: z.array(Widget),
  sip: SipState,
  statistics: Statistics,
}).openapi('AgentDetail');

// Versions

export const VersionParams = z.object({
  id: Uuid,
  version: z
    .string()
    .regex(/^(latest|[1-9]\d{0,8})$/, 'must be a version number or latest')
    .openapi({ description: 'a version number, or `latest` (the newest draft)', example: 'latest' }),
});

export const VersionCreateBody = z
  .object({
    config: AgentConfig.optional(),
    base_version: z.number().int().min(1).max(2_147_483_647).optional(),
    instruction_builder_inputs: InstructionBuilderInputs.optional(),
  })
  .strict()
  .refine((b) => (b.config === undefined) !== (b.base_version === undefined), {
    message: 'Send exactly one of config or base_version',
    path: ['config'],
  })
  // The document states the rule too, so validators and fuzzers send exactly one of the two.
  .openapi('AgentVersionCreate', {
    description: 'Exactly one of `config` (a new configuration) or `base_version` (a version to copy); else 422',
    ...exactlyOneOf(['config', 'base_version']),
  });

export const VersionUpdateBody = z
  .object({
    config: AgentConfig.optional(),
    instruction_builder_inputs: InstructionBuilderInputs.optional(),
  })
  .strict()
  // Neither field is 400 (nothing to update): the document states that one of them is needed.
  .openapi('AgentVersionUpdate', {
    description: 'At least one of `config` or `instruction_builder_inputs` (else 400: nothing to update)',
    ...atLeastOneOf(['config', 'instruction_builder_inputs']),
  });

export const VersionListQuery = z.object({
  limit: Limit,
  cursor: cursorQuery(VersionCursor),
  version: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
  published: Bool.optional(),
  ...timeFilters,
});

export const AgentVersion = z
  .object({
    id: Uuid,
    agent_id: Uuid,
    version: z.number().int(),
    config: AgentConfig,
    instruction_builder_inputs: z.union([InstructionBuilderInputs, z.null()]),
    published: z.boolean(),
    published_at: z.string().nullable(),
    instructions: InstructionsState,
    created_at: z.string(),
    updated_at: z.string(),
    created_by: z.string().nullable(),
    modified_by: z.string().nullable(),
  })
  .openapi('AgentVersion');

export const VersionList = z.object({ data: z.array(AgentVersion), pagination: CursorPagination }).openapi('AgentVersionList');

export const CompareBody = z
  .object({ from_version: z.number().int().min(1).max(2_147_483_647), to_version: z.number().int().min(1).max(2_147_483_647) })
  .strict()
  .openapi('AgentVersionCompare');

export const GenerationStarted = z.object({ workflow_id: z.string() }).openapi('InstructionGenerationStarted');

const NumberList = z.array(PhoneNumberInput).max(100).nullable().default(null);

export const PublishBody = z
  .object({
    phone_numbers: NumberList,
    unassign_phone_numbers: NumberList,
    direction: z.enum(['inbound', 'outbound', 'both']).default('inbound'),
  })
  .strict()
  .refine((b) => !(b.phone_numbers ?? []).some((n) => (b.unassign_phone_numbers ?? []).includes(n)), {
    message: 'A number cannot be both assigned and unassigned',
    path: ['unassign_phone_numbers'],
  })
  .openapi('AgentPublish');

export const AffectedNumber = z.object({
  id: Uuid,
  number: z.string(),
  direction: z.enum(['inbound', 'outbound']),
  action: z.enum(['assigned', 'unassigned', 'unchanged']),
  agent_id: Uuid.nullable().openapi({ description: 'the agent serving the number in this direction now' }),
  previous_agent_id: Uuid.nullable().openapi({ description: 'the agent that served it before; another agent means the number moved' }),
});

export const PublishResult = z
  .object({
    agent_id: Uuid,
    version: z.number().int(),
    published: z.literal(true),
    published_at: z.string(),
    direction: z.enum(['inbound', 'outbound', 'both']),
    phone_numbers: z.array(AffectedNumber),
  })
  .openapi('AgentPublishResult');

// SIP

export const SipDeployment = z
  .object({
    agent_id: Uuid,
    sip_uri: z.string(),
    version: z.number().int(),
    deployed_at: z.string(),
    provisioning: z.enum(SIP_PROVISIONING_KINDS).openapi({
      description:
        '`recorded`: the address is written to the agent and nothing else (the simulated dialer, or Vapi, which has no SIP domains); ' +
        "`provisioned`: the provider's SIP endpoint was made (Twilio: a SIP domain)",
    }),
    provider: SipProvider,
    state: z.enum(['recorded', 'active']),
    provider_id: z
      .string()
      .nullable()
      .openapi({ description: "the provider's id of the endpoint (Twilio's SIP domain sid, Vapi's SIP number id)" }),
    auth: z
      .object({
        kind: z.enum(['credentials', 'ip_addresses']),
        username: z.string().nullable().openapi({ description: 'the SIP username (credentials)' }),
        ip_addresses: z.array(z.string()).nullable().openapi({ description: 'the addresses let in, as address/prefix (ip_addresses)' }),
      })
      .nullable()
      .openapi({ description: 'who may call the endpoint at the provider (null: nothing provisioned)' }),
    credentials: z
      .object({ username: z.string(), password: z.string() })
      .nullable()
      .openapi({
        description:
          'the SIP username and password, made by this deploy and shown only in its answer (never stored, never shown again: ' +
          'deploying again answers null; remove and deploy again for new ones)',
      }),
    note: z.string().openapi({ description: 'What the deploy did, in words', example: SIP_PROVISIONING_NOTE }),
  })
  .openapi('AgentSipDeployment');

const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';

/** An IPv4 address or CIDR range of at least /8 (Twilio's SIP access lists take IPv4 only); a pattern the document states. */
const SipAddress = z
  .string()
  .regex(new RegExp(`^(${OCTET}\\.){3}${OCTET}(/(3[0-2]|[12][0-9]|[89]))?$`), 'must be an IPv4 address or a CIDR range from /8 to /32')
  .openapi({ description: 'an IPv4 address, or a CIDR range from /8 to /32', example: '203.0.113.10' });

export const SipDeployBody = z
  .object({
    ip_addresses: z
      .array(SipAddress)
      .min(1)
      .max(100)
      .optional()
      .openapi({
        description:
          'let in calls from these addresses (Twilio: an IP access control list on the SIP domain) instead of a username and password ' +
          'made for the endpoint; Vapi takes no addresses (409)',
      }),
  })
  .strict()
  .openapi('AgentSipDeploy');

// Phone numbers

export const PhoneNumberCreateBody = z
  .object({ number: PhoneNumberInput, label: z.string().trim().min(1).max(200).nullable().optional() })
  .strict()
  .openapi('PhoneNumberCreate');

export const PhoneNumberListQuery = z.object({
  limit: Limit,
  cursor: cursorQuery(NameCursor),
  agent_id: Uuid.optional(),
  available: Bool.optional().openapi({ description: 'true: numbers serving no agent in either direction' }),
});

export const PhoneNumber = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    number: z.string(),
    label: z.string().nullable(),
    inbound_agent_id: Uuid.nullable().openapi({ description: 'the agent that answers calls to the number' }),
    inbound_agent_version: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "the agent's published version, which answers the calls (null: no agent answers)" }),
    inbound_routed: z.boolean().openapi({
      description:
        "true when the number is pointed at the service at its provider (Twilio's VoiceUrl, Vapi's server URL); numbers registered by hand are never pointed",
    }),
    outbound_agent_id: Uuid.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    created_by: z.string().nullable(),
  })
  .openapi('PhoneNumber');

export const PhoneNumberList = z.object({ data: z.array(PhoneNumber), pagination: CursorPagination }).openapi('PhoneNumberList');

export const PhoneNumberImport = z
  .object({
    provider: z.enum(['twilio', 'vapi']),
    imported: z.number().int().openapi({ description: 'numbers new to the inventory' }),
    updated: z
      .number()
      .int()
      .openapi({ description: "numbers already there, now linked to the provider's (or given its label where they had none)" }),
    unchanged: z.number().int(),
    data: z.array(
      PhoneNumber.extend({
        provider_number_id: z.string().openapi({ description: "the provider's id of the number" }),
        result: z.enum(['imported', 'updated', 'unchanged']),
      }),
    ),
  })
  .openapi('PhoneNumberImport');

// Scaffolding workflows

export const CreateFromWebsiteBody = z
  .object({
    company_name: z.string().trim().min(1).max(200),
    company_website: z.url({ protocol: /^https?$/ }),
    company_overview: z.string().max(20_000).optional(),
    is_demo: z.boolean().default(false),
    skip_deployment: z.boolean().default(false),
    voice_id: z.string().min(1).max(200).optional(),
    avatar_url: z.url({ protocol: /^https?$/ }).optional(),
    existing_agent_id: Uuid.optional(),
    existing_collection_id: Uuid.optional(),
    demo_type: z.string().min(1).max(100).optional(),
  })
  .strict()
  .openapi('AgentCreateFromWebsite');

export const CreateDemoBody = z
  .object({
    company_website: z.url({ protocol: /^https?$/ }),
    instructions: z.string().min(1).max(50_000).optional(),
    include_phone_number: z.boolean().default(false),
  })
  .strict()
  .openapi('AgentCreateDemo');

export const ScaffoldStarted = z
  .object({ workflow_id: z.string(), agent_id: Uuid.openapi({ description: 'the agent the run creates or reuses' }) })
  .openapi('AgentScaffoldStarted');

export const WorkflowParams = z.object({ workflow_id: z.string().min(1).max(200) });

export const ScaffoldStep = z.object({
  name: z.enum(['fetch_website', 'prepare_agent', 'generate_instructions', 'publish', 'assign_phone_number']),
  status: z.enum(['pending', 'running', 'completed', 'skipped', 'failed']),
  detail: z.string().nullable(),
});

export const ScaffoldStatus = z
  .object({
    workflow_id: z.string(),
    kind: z.enum(['create-from-website', 'create-demo']),
    status: z.enum(['running', 'completed', 'failed', 'canceled', 'terminated', 'timed_out', 'continued_as_new', 'unknown']),
    agent_id: Uuid,
    steps: z.array(ScaffoldStep),
    result: z
      .object({
        agent_id: Uuid,
        version: z.number().int().nullable(),
        published: z.boolean(),
        phone_number: z.string().nullable(),
      })
      .nullable(),
    error: z.string().nullable(),
    started_at: z.string().nullable(),
    closed_at: z.string().nullable(),
  })
  .openapi('AgentScaffoldStatus');
