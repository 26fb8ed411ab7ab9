import { z } from 'zod';

// Vapi's `tool-calls` server message for the service's function tools (api/routes/vapi-tool-calls.ts),
// and the answer Vapi expects. Only the fields the service reads are declared; the rest is ignored.

const ToolCallId = z.string().min(1).max(200);
const ToolName = z.string().min(1).max(200);
/** The model's arguments: an object, or its JSON text. */
const Arguments = z.union([z.record(z.string(), z.unknown()), z.string().max(100_000)]);

const ToolCall = z.object({
  id: ToolCallId,
  type: z.string().max(100).optional(),
  function: z.object({ name: ToolName, arguments: Arguments.optional() }).optional(),
  name: ToolName.optional().openapi({ description: 'The flat form of some of Vapi’s examples' }),
  arguments: Arguments.optional(),
  parameters: Arguments.optional(),
});

export const VapiToolCallsBody = z
  .object({
    message: z.object({
      type: z.literal('tool-calls'),
      timestamp: z
        .union([z.number(), z.string().max(100)])
        .optional()
        .openapi({ description: 'milliseconds since the epoch, or ISO 8601; older than TELEPHONY_CALLBACK_MAX_AGE_SECONDS is refused' }),
      call: z.object({
        id: z.string().min(1).max(200),
        metadata: z
          .record(z.string(), z.unknown())
          .nullable()
          .optional()
          .openapi({ description: 'idempotency_key names the campaign call' }),
      }),
      toolCallList: z.array(ToolCall).max(64).optional(),
      toolWithToolCallList: z
        .array(z.object({ toolCall: ToolCall.optional() }))
        .max(64)
        .optional(),
    }),
  })
  .openapi('VapiToolCallsMessage', { description: "Vapi's tool-calls server message; fields other than these are ignored" });

export const VapiToolCallsAnswer = z
  .object({
    results: z.array(
      z.object({
        name: z.string(),
        toolCallId: z.string(),
        result: z.string().optional().openapi({ description: "What the tool answered (added to the call's conversation)" }),
        error: z.string().optional().openapi({ description: 'Why the tool gave no answer (added to the conversation likewise)' }),
      }),
    ),
  })
  .openapi('VapiToolCallsAnswer', { description: 'One result per tool call, in the order Vapi listed them' });
