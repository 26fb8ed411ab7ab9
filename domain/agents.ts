// Rules of the Agents area: instruction state and what may be published.

export type Direction = 'inbound' | 'outbound';

/** What a publish names: one direction, or both. */
export type PublishDirection = Direction | 'both';

/** The directions a publish moves numbers in. */
export const publishDirections = (d: PublishDirection): Direction[] => (d === 'both' ? ['inbound', 'outbound'] : [d]);

export interface InstructionFlags {
  instructions_generating: boolean;
  instructions_dirty: boolean;
  instructions_manually_edited: boolean;
}

/** A version is stale when its instructions are dirty and were not edited by hand. */
export const isStale = (v: Pick<InstructionFlags, 'instructions_dirty' | 'instructions_manually_edited'>) =>
  v.instructions_dirty && !v.instructions_manually_edited;

/**
 * Why a version may not be published, or null: never while its instructions are being generated, and
 * not while they are stale (a published version may always be published again: a rollback).
 */
export function publishRefusal(v: InstructionFlags & { published: boolean }): 'generating' | 'stale' | null {
  if (v.instructions_generating) return 'generating';
  if (!v.published && isStale(v)) return 'stale';
  return null;
}

/** The SIP address of an agent. */
export const sipUri = (agentId: string, sipHost: string) => `sip:${agentId}@${sipHost}`;

/**
 * What a SIP deploy does: with the simulated dialer (and with Vapi, which has no SIP domains) there is
 * no SIP server or provider behind the address, so it is recorded (shown in the agent's read) and no
 * call reaches the agent through it yet; with Twilio the provider's SIP domain is made (`provisioned`).
 */
export const SIP_PROVISIONING_KINDS = ['recorded', 'provisioned'] as const;
export const SIP_PROVISIONING_NOTE =
  'Recorded only: the address is stored and shown on the agent, but this deployment runs no SIP server or provider, so no call reaches the agent through it yet.';
export const SIP_VAPI_NOTE =
  'Recorded only: a Vapi SIP number is made with a username and password, and none was asked for, so the address is stored and shown on the agent but no call reaches the agent through it.';
export const sipTwilioNote = (domainSid: string, voiceUrl: string, who: string) =>
  `Provisioned at Twilio: SIP domain ${domainSid} lets in ${who} and sends each call to ${voiceUrl}, which connects it to the agent on the voice engine.`;
export const sipVapiNote = (numberId: string) =>
  `Provisioned at Vapi: SIP number ${numberId} lets in callers with the username and password, and asks the service for the agent's assistant on each call.`;
