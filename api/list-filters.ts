// Unknown filters and filter values outside their enum are refused with 400 by the route wrapper
// (api/route.ts); what is left for list handlers is the page size rule.

/** A page size: the default when absent, capped at max regardless of input (as GET /accounts does). */
export const cappedLimit = (limit: number, max: number): number => Math.min(limit, max);
