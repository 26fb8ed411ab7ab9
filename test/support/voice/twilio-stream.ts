import type { ServiceDeps } from '../../../services/deps';
import { answerInboundCall } from '../../../services/conversations/inbound';
import type { FakeTwilio, FakeTwilioCall } from '../fake-twilio';
import { SimulatedCaller } from './simulated-caller';

// A Twilio call's Media Stream as the failover test and bench drive it: an inbound call answered with the
// service's TwiML and its stream opened on a given engine (the public voice address names no local one),
// and, once that stream closed, what Twilio does next: ask the <Connect action> and stream the call again.

type StreamOf = NonNullable<ReturnType<FakeTwilio['streamOf']>>;

export interface InboundCallIds {
  orgId: string;
  agentId: string;
  version?: number;
  from: string;
  to: string;
}

/** The call's current stream (its TwiML's <Stream>) opened on `engineUrl` by a simulated caller. */
export function openStream(twilio: FakeTwilio, call: FakeTwilioCall, engineUrl: string, speechBaseUrl: string): Promise<SimulatedCaller> {
  const stream = twilio.streamOf(call.sid);
  if (!stream) throw new Error(`call ${call.sid} has no stream`);
  return SimulatedCaller.connect({
    url: engineUrl,
    token: stream.parameters.token,
    callSid: call.sid,
    accountSid: call.accountSid,
    speechBaseUrl,
  });
}

/** An inbound call Twilio answered with the service's TwiML, its stream opened on `engineUrl`. */
export async function answerOn(
  twilio: FakeTwilio,
  deps: Pick<ServiceDeps, 'sql' | 'config'>,
  ids: InboundCallIds,
  engineUrl: string,
  speechBaseUrl: string,
): Promise<{ call: FakeTwilioCall; stream: StreamOf; caller: SimulatedCaller }> {
  const call = twilio.addInboundCall({ from: ids.from, to: ids.to });
  twilio.setTwiml(
    call.sid,
    await answerInboundCall(deps, {
      orgId: ids.orgId,
      agentId: ids.agentId,
      version: ids.version ?? 1,
      channel: 'twilio',
      callSid: call.sid,
      from: call.from,
      to: call.to,
    }),
  );
  const stream = twilio.streamOf(call.sid)!;
  return { call, stream, caller: await openStream(twilio, call, engineUrl, speechBaseUrl) };
}

/** After the call's stream closed: Twilio asks the <Connect action> what next; a new stream is opened on `engineUrl`. */
export async function streamAgain(
  twilio: FakeTwilio,
  call: FakeTwilioCall,
  engineUrl: string,
  speechBaseUrl: string,
): Promise<{ status: number; stream: StreamOf | null; caller: SimulatedCaller | null }> {
  const next = await twilio.connectAction(call.sid);
  const caller = next.status === 200 && next.stream ? await openStream(twilio, call, engineUrl, speechBaseUrl) : null;
  return { status: next.status, stream: next.stream, caller };
}
