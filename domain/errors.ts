/**
 * The one shape of a domain outcome that is not success. Services, db modules and activities throw
 * it; the API maps `kind` to an HTTP status in one place (api/middleware/errors.ts), activities turn
 * it into a non-retryable failure where retrying cannot help. It carries no HTTP of its own, so the
 * same rule reads the same in a route, a workflow activity or a script.
 */
export type FailureKind =
  | 'invalid' // a rule of the request broke (400)
  | 'unauthenticated' // a signature or credential of a request without a bearer token is missing or wrong (401)
  | 'forbidden' // the caller may not do this (403)
  | 'unprocessable' // a field the schema accepted breaks a rule that needs stored state (422; `fields`)
  | 'not_found' // missing, or another organization's (404)
  | 'conflict' // uniqueness or state conflict (409)
  | 'gone' // existed, no longer usable (410)
  | 'too_large' // over a documented size limit (413)
  | 'unsupported_media' // a media type or charset the route does not take (415)
  | 'rate_limited' // too many attempts (429; `retryAfterSeconds`)
  | 'upstream' // an outside service or dependency failed (502)
  | 'unavailable'; // a feature or dependency is unavailable right now (503)

/** One refused field of a request, located as the 422 body locates it (e.g. `['body', 'contacts', 3, 'agent_id']`). */
export interface FieldIssue {
  loc: (string | number)[];
  msg: string;
}

export class DomainError extends Error {
  constructor(
    readonly kind: FailureKind,
    readonly detail: string,
    readonly retryAfterSeconds?: number,
    readonly fields?: FieldIssue[],
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

export const invalid = (detail: string) => new DomainError('invalid', detail);
export const unprocessable = (fields: FieldIssue[]) =>
  new DomainError('unprocessable', fields.map((f) => f.msg).join('; '), undefined, fields);
export const unauthenticated = (detail: string) => new DomainError('unauthenticated', detail);
export const forbiddenAction = (detail: string) => new DomainError('forbidden', detail);
export const notFound = (detail = 'Not Found') => new DomainError('not_found', detail);
export const conflict = (detail: string) => new DomainError('conflict', detail);
export const gone = (detail: string) => new DomainError('gone', detail);
export const tooLarge = (detail: string) => new DomainError('too_large', detail);
export const unsupportedMedia = (detail: string) => new DomainError('unsupported_media', detail);
export const rateLimited = (detail: string, retryAfterSeconds: number) => new DomainError('rate_limited', detail, retryAfterSeconds);
export const upstream = (detail: string) => new DomainError('upstream', detail);
export const unavailable = (detail: string) => new DomainError('unavailable', detail);

export const isDomainError = (error: unknown, kind?: FailureKind): error is DomainError =>
  error instanceof DomainError && (kind === undefined || error.kind === kind);
