/**
 * The organization a workflow or activity works for: `orgId` on its first argument, as every input in
 * workflows/<area>-messages.ts names it. Pure, so the workflow bundle can import it too.
 */
export function orgIdOf(args: readonly unknown[]): string | undefined {
  const first = args[0];
  if (first === null || typeof first !== 'object') return undefined;
  const orgId = (first as { orgId?: unknown }).orgId;
  return typeof orgId === 'string' && orgId !== '' ? orgId : undefined;
}
