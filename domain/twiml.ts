// TwiML the service answers Twilio with, built as text (a few fixed shapes; no TwiML library needed).

export const escapeXml = (text: string): string =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

const XML = '<?xml version="1.0" encoding="UTF-8"?>';

/**
 * An answered call connected to the voice engine: a bidirectional Media Stream carrying `parameters`
 * (Twilio hands them to the engine in the stream's `start` message). `<Connect>` holds the call while the
 * stream lives; when the stream ends Twilio asks `action` what next (the service hangs up a finished
 * conversation and streams an unfinished one to another engine); without one the call hangs up.
 */
export function connectStreamTwiml(streamUrl: string, parameters: Record<string, string>, action?: string): string {
  const params = Object.entries(parameters)
    .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join('');
  const connect = action ? `<Connect action="${escapeXml(action)}" method="POST">` : '<Connect>';
  return `${XML}<Response>${connect}<Stream url="${escapeXml(streamUrl)}">${params}</Stream></Connect>${action ? '' : '<Hangup/>'}</Response>`;
}

/** A call the service ends now. */
export const hangUpTwiml = (): string => `${XML}<Response><Hangup/></Response>`;

/** A call refused with words (e.g. a number no agent answers). */
export const sayAndHangUpTwiml = (words: string): string => `${XML}<Response><Say>${escapeXml(words)}</Say><Hangup/></Response>`;

/**
 * Twilio's limit on a `<Stream>`'s custom parameters (names and values together, in characters): a
 * longer token is refused by Twilio at call time, so the stream token is kept under it.
 */
export const STREAM_PARAMETERS_MAX = 500;
