import { z } from 'zod';
import { Uuid } from './common';

const Rate = z.number().min(0).max(1).nullable();
const count = (description: string) => z.number().int().min(0).describe(description);

const Figures = {
  sent: count('Steps handed to the mail server (a refusal as a bounce at send time included)'),
  delivered: count('sent minus bounced'),
  bounced: count('Refused as a bounce at send time, or answered by a delivery failure report'),
  replied: count('Answered by a person (interested, not_interested or other; automatic answers not counted)'),
  interested: count('Answered with interest'),
  not_interested: count('Answered with a refusal'),
  auto_replies: count('Answered by an out-of-office or other automatic answer'),
  unsubscribed: count('Followed by the one-click unsubscribe (counted on the last step sent before it)'),
  tracked: count(
    'Delivered messages sent with open and click tracking (their sending domain tracks and is verified); the open and click rates are over these',
  ),
  opens: count('Loads of the open pixel by people (machines counted apart in machine_opens)'),
  unique_opens: count('Messages a person opened (loaded the pixel) or clicked'),
  clicks: count('Clicks on rewritten links by people (machines counted apart in machine_clicks)'),
  unique_clicks: count('Messages with at least one click by a person'),
  machine_opens: count('Pixel loads by machines: Apple Mail Privacy Protection, loads within seconds of delivery, bots and link checkers'),
  machine_clicks: count('Clicks by machines: security scanners (within seconds of delivery, or every link at once), bots'),
  rates: z
    .object({ delivery: Rate, bounce: Rate, reply: Rate, interested: Rate, unsubscribe: Rate, open: Rate, click: Rate })
    .describe(
      'Four decimals; bounce and delivery over sent; open (unique_opens) and click (unique_clicks) over tracked; the others over delivered; null without a denominator',
    ),
};

export const SequenceAnalytics = z
  .object({
    sequence_id: Uuid,
    ...Figures,
    steps: z.array(
      z.object({
        step: z.number().int().min(0),
        ...Figures,
        variants: z.array(
          z.object({ variant: z.number().int().min(0).describe('0: the step itself; 1..n: its A/B variants'), ...Figures }),
        ),
      }),
    ),
  })
  .openapi('OutreachSequenceAnalytics');
