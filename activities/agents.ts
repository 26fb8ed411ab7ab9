import { ApplicationFailure } from '@temporalio/common';
import { isDomainError } from '../domain/errors';
import { WebFetchError } from '../platform/adapters/web/fetch';
import * as instructions from '../services/agent-instructions';
import * as scaffold from '../services/agent-scaffold';
import type { InstructionBuilderInputs } from '../domain/agent-config';
import type { CompanyProfile, ScaffoldInput, VersionRef } from '../workflows/agent-messages';
import type { ActivityDeps } from './deps';

export function createAgentActivities(deps: ActivityDeps) {
  return {
    /** services/agent-instructions.ts: the steps of writing a draft's instructions. */
    beginAgentInstructionGeneration: (ref: VersionRef) => instructions.beginInstructionGeneration(deps, ref),
    writeAgentInstructions: (inputs: InstructionBuilderInputs) => instructions.writeInstructions(deps, inputs),
    saveAgentInstructions: (input: VersionRef & { instructions: string }) => instructions.saveInstructions(deps, input),
    abortAgentInstructionGeneration: (input: VersionRef & { error: string }) => instructions.abortInstructionGeneration(deps, input),

    /** services/agent-scaffold.ts; a page that can never be fetched fails at once. */
    async fetchCompanyProfile(input: { url: string }): Promise<CompanyProfile> {
      try {
        return await scaffold.fetchCompanyProfile(deps, input);
      } catch (error) {
        if (error instanceof WebFetchError)
          throw ApplicationFailure.create({ message: error.message, type: `WebFetchError.${error.code}`, nonRetryable: !error.retryable });
        throw error;
      }
    },

    /** A reused agent that is gone is final. */
    async prepareScaffoldDraft(input: ScaffoldInput & { profile: CompanyProfile | null; runId: string }) {
      try {
        return await scaffold.prepareScaffoldDraft(deps, input);
      } catch (error) {
        if (isDomainError(error, 'not_found')) throw ApplicationFailure.nonRetryable(error.message, 'AgentNotFound');
        throw error;
      }
    },

    /** A publish the version's state refuses is final. */
    async publishScaffoldVersion(input: VersionRef & { actor: string }): Promise<void> {
      const outcome = await scaffold.publishScaffoldVersion(deps, input);
      if (!outcome.ok) throw ApplicationFailure.nonRetryable(`Cannot publish: ${outcome.reason}`, 'PublishRefused');
    },

    assignFreePhoneNumber: (input: { orgId: string; agentId: string }) => scaffold.assignFreePhoneNumber(deps, input),
  };
}
