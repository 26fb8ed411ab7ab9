/** The funnel's stages; a contact starts at `new`. */
export const STAGES = ['new', 'contacted', 'responded', 'converted', 'disqualified'] as const;
export type Stage = (typeof STAGES)[number];

/**
 * The funnel operations and the stages each may start from (docs/decisions/crm.md has the table).
 * `contacted` is entered by outreach when a first message goes out, not by these operations.
 */
export const FUNNEL_MOVES = {
  respond: { to: 'responded', from: ['new', 'contacted', 'disqualified'] },
  disqualify: { to: 'disqualified', from: ['new', 'contacted', 'responded'] },
  convert: { to: 'converted', from: ['new', 'contacted', 'responded'] },
} as const satisfies Record<string, { to: Stage; from: readonly Stage[] }>;
export type FunnelMove = keyof typeof FUNNEL_MOVES;

/** Why `operation` is refused from `stage`. */
export const funnelRefusal = (operation: FunnelMove, stage: string): string =>
  `Cannot ${operation} a contact in stage ${stage}; allowed from ${FUNNEL_MOVES[operation].from.join(', ')}`;

/** A new contact needs at least one of these (create and import); a PATCH may clear them all. */
export const NAMED_RULE = 'A contact needs at least one of first_name, last_name or email';

/** The fields a caller writes besides email and tags (create, PATCH, the CSV's columns). */
export type ContactField =
  | 'account_id'
  | 'first_name'
  | 'last_name'
  | 'title'
  | 'department'
  | 'phone'
  | 'linkedin_url'
  | 'company'
  | 'company_domain'
  | 'source'
  | 'notes'
  | 'owner_id';

/** One import row, ready to upsert: absent values are null and leave an existing contact's alone. */
export type ImportValues = Record<ContactField, string | null> & { email: string; tags: string[] | null };
