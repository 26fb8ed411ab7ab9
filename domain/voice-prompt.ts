import type { AgentConfig } from './agent-config';

// What the model of a voice conversation is told: the version's instructions with its variables filled,
// the contact's CRM fields for campaign calls, and the rules of speaking on a call.

/** {{name}} replaced by its value; an unknown name is left as it is written. */
export function fillVariables(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_]{0,63})\s*\}\}/g, (whole, name: string) => values[name] ?? whole);
}

const SPEAKING_RULES = [
  'You are speaking with a person on a live voice call. Your words are turned into speech.',
  'Answer in one to three short sentences. No lists, no markdown, no emojis.',
  'Spell out numbers, dates and e-mail addresses the way a person would say them.',
  'If you need a fact from the knowledge base, call its tool rather than guessing.',
].join(' ');

/** The system message of the conversation. */
export function systemPrompt(config: AgentConfig, instructions: string, contact: Record<string, string> | null): string {
  const parts = [SPEAKING_RULES, instructions.trim()];
  if (config.language && !config.language.toLowerCase().startsWith('en')) parts.push(`Speak ${config.language}.`);
  if (contact && Object.keys(contact).length)
    parts.push(
      `The person on the call, from the CRM: ${Object.entries(contact)
        .map(([k, v]) => `${k.replace('_', ' ')}: ${v}`)
        .join('; ')}.`,
    );
  if (config.transfer.enabled && config.transfer.rules.length)
    parts.push(
      `Transfer the call with the transfer_call tool when: ${config.transfer.rules.map((r, i) => `(${i + 1}) ${r.condition}`).join(' ')}`,
    );
  return parts.filter(Boolean).join('\n\n');
}

/** A caller's voicemail greeting, heard on an outbound call instead of a person. */
const VOICEMAIL = [
  /\bleave (me |us )?(a |your )?(brief |short )?message\b/i,
  /\b(after|at) the (tone|beep)\b/i,
  /\b(is )?not available( right now| to take your call)?\b/i,
  /\bvoice ?mail\b/i,
  /\bmailbox\b/i,
  /\bcan'?t (come|get) to the phone\b/i,
  /\brecord your message\b/i,
];

export const isVoicemailGreeting = (text: string): boolean => VOICEMAIL.some((re) => re.test(text));
