import type { ServiceDeps } from '../services/deps';
import type { TokenVerifier } from './auth/verifier';
import type { DevIdp } from '../platform/core/dev-idp';

/** Everything a router may use; built once per process (or per test) and passed in, never global. */
export interface AppDeps extends ServiceDeps {
  verifier: TokenVerifier;
  /** Present when the service runs its own development identity provider. */
  devIdp: DevIdp | null;
}
