import { listRefreshers } from '../../platform/adapters/refreshers';

// The catalog of refreshers a credential may name.

export const refresherView = (r: { id: string; kind: string; name: string; description: string }) => ({
  id: r.id,
  kind: r.kind,
  name: r.name,
  description: r.description,
});

export function listRefresherViews() {
  return { data: listRefreshers().map(refresherView) };
}
