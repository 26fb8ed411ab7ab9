/**
 * Which knowledge-base datasets a version of an agent answers from: its `knowledge_base.dataset_ids`
 * and the `dataset_ids` of each `knowledge_base` tool, in that order, each once.
 */
export function datasetIdsOf(config: Record<string, unknown>): string[] {
  const ids: string[] = [];
  const add = (list: unknown) => {
    if (Array.isArray(list)) for (const id of list) if (typeof id === 'string' && !ids.includes(id)) ids.push(id);
  };
  const kb = config.knowledge_base as { dataset_ids?: unknown } | undefined;
  add(kb?.dataset_ids);
  const tools = Array.isArray(config.tools) ? (config.tools as { type?: unknown; dataset_ids?: unknown }[]) : [];
  for (const tool of tools) if (tool?.type === 'knowledge_base') add(tool.dataset_ids);
  return ids;
}

/** The number of results an agent asks for when the caller names none: its config's, else 5. */
export function resultsCountOf(config: Record<string, unknown>): number {
  const n = (config.knowledge_base as { results_count?: unknown } | undefined)?.results_count;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : 5;
}
