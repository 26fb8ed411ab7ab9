import { z } from 'zod';
import { SPEECH_PROVIDERS } from '../../domain/integrations';

// ---- speech and model provider accounts (one API key each) --------------------------------------------

export const SpeechAccountBody = z
  .strictObject({
    provider: z.enum(SPEECH_PROVIDERS).openapi({
      description:
        "deepgram: agents' transcriber; elevenlabs, cartesia: agents' voice; openai: the model of agents whose llm.provider is openai",
    }),
    api_key: z
      .string()
      .min(8)
      .max(512)
      .regex(/^[\x21-\x7e]+$/, 'must be printable characters without spaces')
      .openapi({ description: "The account's API key; checked at the provider before it is stored; never returned" }),
  })
  .openapi('SpeechAccountKey', {
    description: "An API key of the organization's account at a speech or model provider",
  });
