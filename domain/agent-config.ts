import { z } from 'zod';
import { PhoneNumberInput } from './phone-numbers';
import { exactlyOneOf } from './schema-rules';
import { trimmedText } from './trimmed-text';

// The configuration a voice agent runs with: a domain rule shared by the API and the worker. Schemas here carry no `.openapi()` calls (only zod's own
// `.meta`), because the worker imports them too, without the OpenAPI extension of zod.

/** A name the instructions may reference as {{name}}. */
const VARIABLE_NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/;

/** A phone number: E.164 and valid for its region (domain/phone-numbers.ts), stored normalized. */
export const E164 = PhoneNumberInput;

/** A BCP-47 language tag (language, optional script, region or variant subtags), e.g. en-US, pt-BR, zh-Hant-TW. */
export const LanguageTag = z
  .string()
  .regex(
    /^[a-zA-Z]{2,3}(-[a-zA-Z]{4})?(-([a-zA-Z]{2}|\d{3}))?(-([a-zA-Z\d]{5,8}|\d[a-zA-Z\d]{3}))*$/,
    'must be a BCP-47 language tag such as en-US',
  );

const ToolName = z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'letters, digits, _ and -, starting with a letter, at most 64');
const HttpsUrl = z.url({ protocol: /^https?$/ });

const WebhookTool = z
  .object({
    type: z.literal('webhook'),
    name: ToolName,
    description: z.string().min(1).max(1000),
    url: HttpsUrl,
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    headers: z.record(z.string(), z.string()).default({}),
    /** JSON Schema of the arguments the model fills in. */
    parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
    timeout_seconds: z.number().int().min(1).max(60).default(10),
    speak_while_waiting: z.string().max(500).optional(),
  })
  .strict();

const TransferDestination = z
  .object({
    phone_number: E164.optional(),
    sip_uri: z
      .string()
      .regex(/^sips?:[^\s@\u0000]+@[^\s@\u0000]+$/, 'must look like sip:user@host')
      .optional(),
    description: z.string().max(500).optional(),
  })
  .strict()
  .refine((d) => Boolean(d.phone_number) !== Boolean(d.sip_uri), 'exactly one of phone_number or sip_uri')
  .meta({ description: 'Exactly one of phone_number or sip_uri', ...exactlyOneOf(['phone_number', 'sip_uri']) });

const TransferCallTool = z
  .object({
    type: z.literal('transfer_call'),
    name: ToolName,
    description: z.string().min(1).max(1000),
    destinations: z.array(TransferDestination).min(1).max(20),
    mode: z.enum(['cold', 'warm']).default('cold'),
    message: z.string().max(1000).optional(),
  })
  .strict();

const EndCallTool = z
  .object({
    type: z.literal('end_call'),
    name: ToolName.default('end_call'),
    description: z.string().max(1000).default('End the call when the conversation is over'),
    message: z.string().max(1000).optional(),
  })
  .strict();

const KnowledgeBaseTool = z
  .object({
    type: z.literal('knowledge_base'),
    name: ToolName,
    description: z.string().min(1).max(1000),
    dataset_ids: z.array(z.uuid()).min(1).max(20),
    results_count: z.number().int().min(1).max(20).default(5),
  })
  .strict();

export const AgentTool = z.discriminatedUnion('type', [WebhookTool, TransferCallTool, EndCallTool, KnowledgeBaseTool]);

const Voice = z
  .object({
    provider: z.enum(['elevenlabs', 'cartesia', 'openai', 'azure', 'deepgram', 'playht']).default('elevenlabs'),
    voice_id: z.string().min(1).max(200).default('default'),
    speed: z.number().min(0.5).max(2).default(1),
    stability: z.number().min(0).max(1).optional(),
    similarity_boost: z.number().min(0).max(1).optional(),
  })
  .strict();

const Llm = z
  .object({
    /** openai: the organization's OpenAI-compatible account runs `model`; unset: the deployment's model. */
    provider: z.enum(['openai']).optional(),
    model: z.string().min(1).max(200).default('gpt-4o-mini'),
    temperature: z.number().min(0).max(2).default(0.7),
    max_tokens: z.number().int().min(1).max(32000).default(1024),
  })
  .strict();

const Transcriber = z
  .object({
    provider: z.enum(['deepgram', 'assemblyai', 'openai', 'azure']).default('deepgram'),
    model: z.string().min(1).max(200).optional(),
    keywords: z.array(z.string().min(1).max(100)).max(100).default([]),
  })
  .strict();

const TransferRule = z
  .object({
    /** When to transfer, in plain words the model judges, e.g. "the caller asks for billing". */
    condition: z.string().min(1).max(1000),
    destination: E164,
    message: z.string().max(1000).optional(),
  })
  .strict();

const Transfer = z
  .object({
    enabled: z.boolean().default(false),
    default_destination: E164.nullable().default(null),
    rules: z.array(TransferRule).max(20).default([]),
  })
  .strict();

const EndCall = z
  .object({
    /** Phrases after which the agent hangs up, e.g. "goodbye". */
    phrases: z.array(z.string().min(1).max(200)).max(20).default([]),
    message: z.string().max(1000).nullable().default(null),
    end_on_voicemail: z.boolean().default(true),
  })
  .strict();

const Limits = z
  .object({
    max_duration_seconds: z.number().int().min(30).max(7200).default(1800),
    silence_timeout_seconds: z.number().int().min(5).max(600).default(30),
    max_idle_prompts: z.number().int().min(0).max(10).default(2),
    response_delay_seconds: z.number().min(0).max(5).default(0),
  })
  .strict();

const Recording = z
  .object({
    enabled: z.boolean().default(true),
    channels: z.enum(['mono', 'dual']).default('mono'),
    redact_pii: z.boolean().default(false),
    retention_days: z.number().int().min(1).max(3650).default(90),
  })
  .strict();

const KnowledgeBase = z
  .object({
    dataset_ids: z.array(z.uuid()).max(50).default([]),
    results_count: z.number().int().min(1).max(20).default(5),
  })
  .strict();

export const AgentConfig = z
  .object({
    instructions: z.string().max(50_000).default(''),
    first_message: z.string().max(2000).nullable().default(null),
    first_speaker: z.enum(['agent', 'user']).default('agent'),
    language: LanguageTag.default('en-US'),
    voice: Voice.default(Voice.parse({})),
    llm: Llm.default(Llm.parse({})),
    transcriber: Transcriber.default(Transcriber.parse({})),
    tools: z
      .array(AgentTool)
      .max(64)
      .default([])
      .refine((tools) => new Set(tools.map((t) => t.name)).size === tools.length, 'tool names must be unique'),
    knowledge_base: KnowledgeBase.default(KnowledgeBase.parse({})),
    transfer: Transfer.default(Transfer.parse({})),
    end_call: EndCall.default(EndCall.parse({})),
    limits: Limits.default(Limits.parse({})),
    recording: Recording.default(Recording.parse({})),
    /** Values the instructions may reference as {{name}}. */
    variables: z
      .record(z.string().regex(VARIABLE_NAME), z.string().max(2000))
      .default({})
      // The key rule as the document states it (the generator drops a record's key schema).
      .meta({ propertyNames: { pattern: VARIABLE_NAME.source } }),
  })
  .strict()
  .meta({ id: 'AgentConfig', description: 'Everything a voice agent runs with' });

export type AgentConfig = z.output<typeof AgentConfig>;

/** The configuration of a new agent's first draft. */
export const defaultAgentConfig = (): AgentConfig => AgentConfig.parse({});

/** What the instruction writer works from. */
export const InstructionBuilderInputs = z
  .object({
    company_name: trimmedText(200),
    company_website: z.url({ protocol: /^https?$/ }).optional(),
    company_overview: z.string().max(20_000).optional(),
    agent_role: z.string().max(1000).optional(),
    goals: z.array(z.string().min(1).max(500)).max(20).optional(),
    tone: z.string().max(200).optional(),
    key_facts: z.array(z.string().min(1).max(1000)).max(50).optional(),
    faqs: z
      .array(z.object({ question: z.string().min(1).max(1000), answer: z.string().min(1).max(4000) }).strict())
      .max(50)
      .optional(),
    guardrails: z.array(z.string().min(1).max(1000)).max(20).optional(),
    language: LanguageTag.optional(),
  })
  .strict()
  .meta({ id: 'InstructionBuilderInputs', description: 'Input for generating instructions' });

export type InstructionBuilderInputs = z.output<typeof InstructionBuilderInputs>;

/** The complete JSON Schema of what a client may send as AgentConfig (defaults included). */
export function agentConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(AgentConfig, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
}
