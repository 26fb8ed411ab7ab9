/** A nullable timestamp as the API shows it. */
export const iso = (d: Date | null): string | null => d?.toISOString() ?? null;
