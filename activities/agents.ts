import { WebFetchError } from '../platform/adapters/web/fetch';
import * as instructions from '../services/agent-instructions';
import * as scaffold from '../services/agent-scaffold';
import type { InstructionBuilderInputs } from '../domain/agent-config';
import type {
  CompanyPageRef,
  CompanyProfile,
  InstructionsAbort,
  InstructionsSave,
  PhoneNumberClaim,
  ScaffoldDraftInput,
  ScaffoldPublish,
  VersionRef,
} from '../workflows/agent-messages';
import type { ActivityDeps } from './deps';
import { classified, finalFailure, onDomain, onError } from './failures';

/** A page that can never be fetched fails at once (WebFetchError says which); others are retried. */
const FETCH_FAILURES = [onError(WebFetchError, (e) => `WebFetchError.${e.code}`, { retryable: (e) => e.retryable })];
/** A reused agent that is gone is final. */
const DRAFT_FAILURES = [onDomain('not_found', 'AgentNotFound')];

export function createAgentActivities(deps: ActivityDeps) {
  return {
    /** services/agent-instructions.ts: the steps of writing a draft's instructions. */
    beginAgentInstructionGeneration: (ref: VersionRef) => instructions.beginInstructionGeneration(deps, ref),
    writeAgentInstructions: (inputs: InstructionBuilderInputs) => instructions.writeInstructions(deps, inputs),
    saveAgentInstructions: (input: InstructionsSave) => instructions.saveInstructions(deps, input),
    abortAgentInstructionGeneration: (input: InstructionsAbort) => instructions.abortInstructionGeneration(deps, input),

    /** services/agent-scaffold.ts; a page that can never be fetched fails at once. */
    fetchCompanyProfile: (input: CompanyPageRef): Promise<CompanyProfile> =>
      classified(FETCH_FAILURES, () => scaffold.fetchCompanyProfile(deps, input)),

    prepareScaffoldDraft: (input: ScaffoldDraftInput) => classified(DRAFT_FAILURES, () => scaffold.prepareScaffoldDraft(deps, input)),

    /** A publish the version's state refuses is final. */
    async publishScaffoldVersion(input: ScaffoldPublish): Promise<void> {
      const outcome = await scaffold.publishScaffoldVersion(deps, input);
      if (!outcome.ok) throw finalFailure('PublishRefused', `Cannot publish: ${outcome.reason}`);
    },

    assignFreePhoneNumber: (input: PhoneNumberClaim) => scaffold.assignFreePhoneNumber(deps, input),
  };
}

/** What the agents workflows may call: their `proxyActivities<AgentActivities>` type. */
export type AgentActivities = ReturnType<typeof createAgentActivities>;
