import { z } from 'zod';

// The open pixel and link redirect of a tracked step: the token is the capability (signed), so any
// text of a token's length that does not verify answers the same 404.

export const TrackingTokenParams = z.object({
  token: z.string().max(200).describe('Signed by the service: the message (and, for a link, its index)'),
});
