import { REFRESHER_IDS, type RefresherKind } from '../../../domain/credentials';
import { httpJsonRefresher } from './http-json';
import { oauth2ClientCredentialsRefresher, oauth2RefreshTokenRefresher } from './oauth2';
import type { Refresher } from './types';

export { RefreshError, type Refresher, type RefreshContext, type RefreshResult } from './types';
export { createSafeHttp, type SafeHttp } from './http';

const BUILT_IN: Record<RefresherKind, Refresher> = {
  oauth2_refresh_token: oauth2RefreshTokenRefresher(REFRESHER_IDS.oauth2_refresh_token),
  oauth2_client_credentials: oauth2ClientCredentialsRefresher(REFRESHER_IDS.oauth2_client_credentials),
  http_json: httpJsonRefresher(REFRESHER_IDS.http_json),
};

const registry = new Map<string, Refresher>(Object.values(BUILT_IN).map((r) => [r.id, r]));

/** Adds a refresher (e.g. an integration's); its id must be new. */
export function registerRefresher(refresher: Refresher): void {
  if (registry.has(refresher.id)) throw new Error(`Refresher ${refresher.id} is already registered`);
  registry.set(refresher.id, refresher);
}

export const findRefresher = (id: string): Refresher | undefined => registry.get(id);
export const listRefreshers = (): Refresher[] => [...registry.values()];
