import { z } from 'zod';
import { UNSUBSCRIBE_BODY_LIMIT_BYTES } from '../../services/outreach/unsubscribe';

export const UnsubscribeParams = z.object({ token: z.string().max(200).describe('The capability named in the List-Unsubscribe header') });

export const UnsubscribeAnswer = z.object({ unsubscribed: z.literal(true) }).openapi('OutreachUnsubscribed');

export const UnsubscribeForm = z
  .strictObject({ 'List-Unsubscribe': z.literal('One-Click').optional() })
  .describe(
    `RFC 8058 one-click body: List-Unsubscribe=One-Click (form-encoded); the server reads at most ${UNSUBSCRIBE_BODY_LIMIT_BYTES} bytes and otherwise ignores it`,
  );
