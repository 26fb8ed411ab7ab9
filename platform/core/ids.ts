import { uuidv7 } from 'uuidv7';

/** UUIDv7 for every id the service creates: time-ordered, so inserts stay local in the btree. */
export const newId = (): string => uuidv7();
