/** Contacts, deals and accounts keep tags as plain names; these are the tables a rename or delete reaches. */
export const TAGGED_TABLES = ['contacts', 'deals', 'accounts'] as const;
export type TaggedTable = (typeof TAGGED_TABLES)[number];

/** Tag names once each, in the order given. */
export const uniqueTags = (tags: string[]): string[] => [...new Set(tags)];
