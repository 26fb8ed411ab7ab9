import { ApplicationFailure } from '@temporalio/common';
import { AgentConfig, InstructionBuilderInputs } from '../domain/agent-config';
import { getAgent, insertAgent } from '../db/agents';
import {
  abortGeneration,
  findScaffoldDraft,
  getVersion,
  insertNextVersion,
  newestVersion,
  publishVersion,
  saveGeneratedInstructions,
} from '../db/agent-versions';
import { claimFreeNumber } from '../db/phone-numbers';
import { emitEvent } from '../services/notifications';
import { createLlmWriter, type InstructionInputs, type PageProfile } from '../platform/llm';
import { WebFetchError, extractPageProfile, fetchPage } from '../platform/web-fetch';
import type { ActivityDeps } from './deps';

export interface VersionRef {
  orgId: string;
  agentId: string;
  version: number;
}

export interface CompanyProfile extends PageProfile {
  /** What the company does, in a few sentences (the LLM's, or the built-in writer's excerpt). */
  overview: string;
}

/** What a scaffolding run was asked to do (see POST /core/agents/create-from-website and create-demo). */
export interface ScaffoldInput {
  kind: 'create-from-website' | 'create-demo';
  orgId: string;
  agentId: string;
  /** The agent exists already (existing_agent_id); otherwise the run creates it with agentId. */
  existingAgent: boolean;
  actor: string;
  companyWebsite: string;
  companyName?: string;
  companyOverview?: string;
  isDemo: boolean;
  skipDeployment: boolean;
  voiceId?: string;
  avatarUrl?: string;
  collectionId?: string;
  demoType?: string;
  instructions?: string;
  includePhoneNumber: boolean;
}

export interface ScaffoldDraft {
  version: number;
  inputs: InstructionInputs;
  /** Instructions still to be written by the instruction writer. */
  needsInstructions: boolean;
}

const hostOf = (url: string) => new URL(url).hostname.replace(/^www\./, '');

export function createAgentActivities({ sql, config }: ActivityDeps) {
  const instructionsWriter = createLlmWriter(config, 'instructions');
  const summaryWriter = createLlmWriter(config, 'summary');

  return {
    /**
     * The builder inputs of a version whose generation was started, or null when there is nothing to do.
     * The row lock waits for the API transaction that set `instructions_generating` to commit or roll
     * back, so a start whose transaction rolled back ends here quietly.
     */
    async beginAgentInstructionGeneration(ref: VersionRef): Promise<InstructionInputs | null> {
      return sql.begin(async (tx) => {
        const v = await getVersion(tx, ref.orgId, ref.agentId, ref.version, { forUpdate: true });
        if (!v || v.published || !v.instructions_generating || !v.instruction_builder_inputs) return null;
        return v.instruction_builder_inputs as unknown as InstructionInputs;
      });
    },

    async writeAgentInstructions(inputs: InstructionInputs): Promise<string> {
      return instructionsWriter.writeInstructions(inputs);
    },

    async saveAgentInstructions(input: VersionRef & { instructions: string }): Promise<boolean> {
      return saveGeneratedInstructions(sql, input.orgId, input.agentId, input.version, input.instructions);
    },

    async abortAgentInstructionGeneration(input: VersionRef & { error: string }): Promise<void> {
      await abortGeneration(sql, input.orgId, input.agentId, input.version, input.error);
    },

    /** Fetches the company's page and says what it shows; a page that can never be fetched fails at once. */
    async fetchCompanyProfile(input: { url: string }): Promise<CompanyProfile> {
      let page;
      try {
        page = await fetchPage(input.url, { allowPrivate: config.WEB_FETCH_ALLOW_PRIVATE });
      } catch (error) {
        if (error instanceof WebFetchError)
          throw ApplicationFailure.create({ message: error.message, type: `WebFetchError.${error.code}`, nonRetryable: !error.retryable });
        throw error;
      }
      const profile = extractPageProfile(page.body, page.url, 4000);
      const overview = await summaryWriter.summariseCompany(profile);
      return { ...profile, overview: overview.slice(0, 20_000) };
    },

    /** Creates (or finds again, on a retry) the run's agent and its draft version. */
    async prepareScaffoldDraft(input: ScaffoldInput & { profile: CompanyProfile | null; runId: string }): Promise<ScaffoldDraft> {
      return sql.begin(async (tx) => {
        const { orgId, agentId, profile } = input;
        if (input.existingAgent) {
          if (!(await getAgent(tx, orgId, agentId, { forUpdate: true })))
            throw ApplicationFailure.nonRetryable('The agent no longer exists', 'AgentNotFound');
        } else {
          const site = profile?.title?.slice(0, 150) || hostOf(input.companyWebsite);
          const name = input.companyName ?? `${site} (demo)`;
          const metadata: Record<string, unknown> = { source: input.kind, company_website: input.companyWebsite };
          if (input.avatarUrl) metadata.avatar_url = input.avatarUrl;
          if (input.demoType) metadata.demo_type = input.demoType;
          await insertAgent(
            tx,
            orgId,
            { name, description: profile?.description?.slice(0, 5000) ?? null, is_demo: input.isDemo, metadata },
            input.actor,
            agentId,
          );
          await getAgent(tx, orgId, agentId, { forUpdate: true });
        }

        const inputs = InstructionBuilderInputs.parse({
          company_name: (input.companyName ?? profile?.title ?? hostOf(input.companyWebsite)).slice(0, 200),
          company_website: input.companyWebsite,
          company_overview: (input.companyOverview ?? profile?.overview)?.slice(0, 20_000) || undefined,
          key_facts: profile?.headings.length ? profile.headings.slice(0, 10).map((h) => h.slice(0, 1000)) : undefined,
        }) as InstructionInputs;
        const needsInstructions = !input.instructions;
        const again = await findScaffoldDraft(tx, orgId, agentId, input.runId);
        if (again) return { version: again.version, inputs, needsInstructions };

        const base = await newestVersion(tx, orgId, agentId);
        const baseConfig = AgentConfig.safeParse(base?.config ?? {});
        const start = baseConfig.success ? baseConfig.data : AgentConfig.parse({});
        const config = AgentConfig.parse({
          ...start,
          instructions: input.instructions ?? start.instructions,
          first_message: start.first_message ?? `Hello, thanks for calling ${inputs.company_name}. How can I help you today?`,
          voice: { ...start.voice, ...(input.voiceId ? { voice_id: input.voiceId } : {}) },
          knowledge_base: {
            ...start.knowledge_base,
            dataset_ids: input.collectionId
              ? [...new Set([...start.knowledge_base.dataset_ids, input.collectionId])]
              : start.knowledge_base.dataset_ids,
          },
        });
        const draft = await insertNextVersion(
          tx,
          orgId,
          agentId,
          {
            config,
            instruction_builder_inputs: inputs as unknown as Record<string, unknown>,
            // Given instructions are the caller's own words: manually edited. Otherwise generating until written.
            instructions_generating: needsInstructions,
            instructions_manually_edited: !needsInstructions,
            scaffold_run_id: input.runId,
          },
          input.actor,
        );
        return { version: draft.version, inputs, needsInstructions };
      });
    },

    /**
     * Publishes the scaffolded version with its `agent_version.published` event in one transaction. A retry
     * after a commit finds the version published and writes nothing, so the event is emitted once.
     */
    async publishScaffoldVersion(input: VersionRef & { actor: string }): Promise<void> {
      const outcome = await sql.begin(async (tx) => {
        const before = await getVersion(tx, input.orgId, input.agentId, input.version);
        if (before?.published) return { ok: true as const };
        const result = await publishVersion(tx, { ...input, assign: [], unassign: [], directions: ['inbound'] });
        if (result.ok) {
          const agent = await getAgent(tx, input.orgId, input.agentId);
          await emitEvent(tx, input.orgId, {
            event_type: 'agent_version.published',
            entity_type: 'agent_version',
            entity_id: result.version.id,
            payload: { agent_id: input.agentId, name: agent?.name ?? null, version: result.version.version, direction: 'inbound' },
          });
        }
        return result;
      });
      if (!outcome.ok) throw ApplicationFailure.nonRetryable(`Cannot publish: ${outcome.reason}`, 'PublishRefused');
    },

    /** A free number of the organization's inventory, now serving the agent inbound; null when none is free. */
    async assignFreePhoneNumber(input: { orgId: string; agentId: string }): Promise<string | null> {
      const row = await claimFreeNumber(sql, input.orgId, input.agentId);
      return row?.number ?? null;
    },
  };
}
