import { z } from 'zod';
import { ErrorBody } from './common';

// The open pixel and link redirect of a tracked step: the token is the capability (signed), so any
// text of a token's length that does not verify answers the same 404.

export const TrackingTokenParams = z.object({
  token: z.string().max(200).describe('Signed by the service: the message (and, for a link, its index)'),
});

/**
 * The query of the public addresses a sent step names (pixel, link, unsubscribe): none is read, and any
 * is ignored, since links gain parameters on the way (fbclid, gclid, utm_… from the sites and mail
 * programs they pass through) and a person following one must always reach it.
 */
export const IgnoredQuery = z.looseObject({});

export const IGNORED_QUERY_NOTE =
  'Query parameters are ignored (links gain fbclid, utm_… and the like on the way): none is read, none is refused.';

/** The wrapper's 400 on these routes: only a query string that is not UTF-8 (no parameter is unknown here). */
export const QUERY_NOT_UTF8 = {
  400: { description: 'The query string is not valid UTF-8 (its parameters are otherwise ignored)', schema: ErrorBody },
} as const;
