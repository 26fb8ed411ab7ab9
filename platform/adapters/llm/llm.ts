import OpenAI from 'openai';
import type { Config } from '../../core/config';
import { versionChanges, versionLabel } from './agent-version-changes';
import { describeChange } from '../../core/json-diff';
import type { LocalLlmConfig } from './llm-local';
import { LocalWriter } from './llm-writer-local';

/**
 * The service's one door to a language model for writing. With LLM_BASE_URL set it speaks the
 * OpenAI-compatible chat-completions protocol; without it each feature is written by the local model
 * (platform/adapters/llm/llm-writer-local.ts) or by a built-in deterministic writer, and the text says which.
 */
export interface LlmWriter {
  readonly kind: 'llm' | 'builtin';
  /** Streams a plain-text summary of how one agent version differs from another, piece by piece. */
  compareVersions(input: CompareInput): AsyncIterable<string>;
  /** The instructions (system prompt) of a voice agent, from the instruction builder's inputs. */
  writeInstructions(inputs: InstructionInputs): Promise<string>;
  /** A few sentences on what a company does, from what its website shows. */
  summariseCompany(page: PageProfile): Promise<string>;
}

export interface VersionSnapshot {
  version: number;
  published: boolean;
  config: unknown;
  instruction_builder_inputs: unknown;
}

export interface CompareInput {
  agentName: string;
  from: VersionSnapshot;
  to: VersionSnapshot;
}

/** The instruction builder's inputs (validated at the API edge as InstructionBuilderInputs). */
export interface InstructionInputs {
  company_name: string;
  company_website?: string;
  company_overview?: string;
  agent_role?: string;
  goals?: string[];
  tone?: string;
  key_facts?: string[];
  faqs?: { question: string; answer: string }[];
  guardrails?: string[];
  language?: string;
}

/** What a page says about its company (see platform/adapters/web/fetch.ts). */
export interface PageProfile {
  url: string;
  title: string | null;
  description: string | null;
  headings: string[];
  text: string;
}

export type LlmConfig = Pick<Config, 'LLM_BASE_URL' | 'LLM_API_KEY' | 'LLM_MODEL' | 'LLM_LOCAL_FEATURES'> & LocalLlmConfig;

/** What a writer is asked for: version comparisons, agent instructions, company summaries. */
export type LlmFeature = Config['LLM_LOCAL_FEATURES'][number];

export const DEFAULT_LLM_MODEL = 'gpt-4o-mini';

/**
 * The writer of one feature: the OpenAI-compatible LLM when LLM_BASE_URL is set; otherwise the local
 * model for the features LLM_LOCAL_FEATURES names, and the built-in writer for the rest (the default
 * for all three: it wrote better than the local model on the judged sample, see docs/decisions/language-model.md).
 */
export function createLlmWriter(config: LlmConfig, feature: LlmFeature): LlmWriter {
  if (config.LLM_BASE_URL) return new OpenAiWriter(config.LLM_BASE_URL, config.LLM_API_KEY, config.LLM_MODEL ?? DEFAULT_LLM_MODEL);
  return config.LLM_LOCAL_FEATURES.includes(feature) ? new LocalWriter(config) : new BuiltinWriter();
}

export { versionChanges };

export const BUILTIN_NOTICE =
  'Written by the built-in deterministic writer, not by an LLM (no LLM_BASE_URL is set, and the local model does not write this).';

export class BuiltinWriter implements LlmWriter {
  readonly kind = 'builtin' as const;

  async *compareVersions(input: CompareInput): AsyncIterable<string> {
    const changes = versionChanges(input);
    yield `${BUILTIN_NOTICE}\n`;
    yield `Agent "${input.agentName}": ${versionLabel(input.from)} → ${versionLabel(input.to)}.\n`;
    if (changes.length === 0) {
      yield 'No differences: the two versions have the same configuration and instruction builder inputs.\n';
      return;
    }
    yield `${changes.length} difference${changes.length === 1 ? '' : 's'}:\n`;
    for (const change of changes) yield `- ${describeChange(change)}\n`;
  }

  async writeInstructions(inputs: InstructionInputs): Promise<string> {
    const lines = [
      `# ${BUILTIN_NOTICE}`,
      '',
      `You are the voice assistant of ${inputs.company_name}${inputs.company_website ? ` (${inputs.company_website})` : ''}.`,
    ];
    if (inputs.agent_role) lines.push(`Your role: ${inputs.agent_role}`);
    if (inputs.company_overview) lines.push('', '## About the company', inputs.company_overview);
    const section = (title: string, items?: string[]) => {
      if (items?.length) lines.push('', `## ${title}`, ...items.map((i) => `- ${i}`));
    };
    section('Goals', inputs.goals);
    section('Key facts', inputs.key_facts);
    if (inputs.faqs?.length)
      lines.push('', '## Frequently asked questions', ...inputs.faqs.flatMap((f) => [`Q: ${f.question}`, `A: ${f.answer}`]));
    section('Rules', [
      ...(inputs.guardrails ?? []),
      'Keep answers short and spoken: one or two sentences at a time.',
      'Never invent facts about the company; offer to follow up when you do not know.',
    ]);
    lines.push('', `Tone: ${inputs.tone ?? 'friendly and professional'}.`);
    if (inputs.language) lines.push(`Speak ${inputs.language}.`);
    return lines.join('\n');
  }

  async summariseCompany(page: PageProfile): Promise<string> {
    const parts = [page.description, page.headings.slice(0, 5).join('; '), page.text.slice(0, 600)].filter((p): p is string => Boolean(p));
    return parts.join('\n').trim() || `The website ${page.url} says little about the company.`;
  }
}

export class OpenAiWriter implements LlmWriter {
  readonly kind = 'llm' as const;
  private readonly client: OpenAI;

  constructor(
    baseURL: string,
    apiKey: string | undefined,
    private readonly model: string,
  ) {
    // Bounded: a slow provider fails the request (or the activity attempt) rather than hanging it.
    this.client = new OpenAI({ baseURL, apiKey: apiKey ?? 'not-needed', timeout: 60_000, maxRetries: 1 });
  }

  async *compareVersions(input: CompareInput): AsyncIterable<string> {
    const changes = versionChanges(input).map(describeChange);
    const stream = await this.client.chat.completions.create({
      model: this.model,
      stream: true,
      temperature: 0.2,
      messages: [
        {
          role: 'system',
          content:
            'You compare two versions of a voice agent configuration for its owner. Write a short plain-text summary of what changed and what it means for callers. Do not use Markdown.',
        },
        {
          role: 'user',
          content: [
            `Agent "${input.agentName}": ${versionLabel(input.from)} → ${versionLabel(input.to)}.`,
            changes.length ? `Changes:\n${changes.join('\n')}` : 'No differences.',
            `Configuration of version ${input.from.version}: ${JSON.stringify(input.from.config)}`,
            `Configuration of version ${input.to.version}: ${JSON.stringify(input.to.config)}`,
          ].join('\n\n'),
        },
      ],
    });
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta?.content;
      if (text) yield text;
    }
  }

  async writeInstructions(inputs: InstructionInputs): Promise<string> {
    return this.complete(
      'You write the instructions (system prompt) of a phone voice agent for a company. Write them in the second person, concise, in plain text, ready to use.',
      `Write the instructions from these inputs:\n${JSON.stringify(inputs, null, 2)}`,
    );
  }

  async summariseCompany(page: PageProfile): Promise<string> {
    return this.complete(
      'You summarise, in at most five plain sentences, what a company does, from its website.',
      JSON.stringify({
        url: page.url,
        title: page.title,
        description: page.description,
        headings: page.headings,
        text: page.text.slice(0, 8000),
      }),
    );
  }

  private async complete(system: string, user: string): Promise<string> {
    const response = await this.client.chat.completions.create({
      model: this.model,
      temperature: 0.3,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
    });
    const text = response.choices[0]?.message?.content?.trim();
    if (!text) throw new Error('The LLM returned no text');
    return text;
  }
}
