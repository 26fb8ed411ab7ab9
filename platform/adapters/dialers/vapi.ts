import { CallRejected, type CallRequest, type Dialer, type PlacedCall } from './types';
import type { Logger } from '../../core/logger';
import type { ProviderCall, ProviderCallStore } from './call-store';
import { exchange, expectOk, isRequestRefusal, type ProviderResponse } from './http';
import { reconcileCalls } from './reconcile';
import { withAccount } from './accounts';
import { renderVapiAssistant } from './vapi-assistant';
import { vapiEvent } from './vapi-status';

// Vapi (voice-AI runtime): a call is `POST /call` (Bearer API key) from one of the account's phone
// numbers (`phoneNumberId`) to `customer.number`, with a transient assistant rendered from the agent's
// published configuration and `metadata` carrying the attempt key. Its server messages (status updates
// and the end-of-call report) come back to /telephony/vapi/events with the `x-vapi-secret` header;
// reconcile() reads `GET /call/{id}` for calls whose report never came.

export const VAPI_EVENTS_PATH = '/telephony/vapi/events';
/** Where Vapi sends the `tool-calls` of the service's function tools (webhooks, knowledge base). */
export const VAPI_TOOL_CALLS_PATH = '/telephony/vapi/tool-calls';

export interface VapiDialerOptions {
  baseUrl: string;
  apiKey: string;
  phoneNumberId: string;
  webhookSecret: string;
  callbackBaseUrl: string;
  /** The organization's connection the account is (null: the deployment's account); named in the server URL. */
  connectionId: string | null;
  timeoutMs: number;
  reconcileAfterMs: number;
  calls: ProviderCallStore;
  logger: Logger;
}

/** The call resource, as far as it is read here. */
export interface VapiCall {
  id: string;
  status: string;
  endedReason?: string;
  startedAt?: string | null;
  endedAt?: string | null;
  createdAt?: string;
  metadata?: Record<string, unknown> | null;
  recordingUrl?: string | null;
  transcript?: string | null;
  summary?: string | null;
  analysis?: { summary?: string | null } | null;
  artifact?: { recordingUrl?: string | null; transcript?: string | null } | null;
  cost?: number | null;
}

/** A call resource as a report. */
export const vapiCallReport = (call: VapiCall) => ({
  id: call.id,
  status: call.status,
  endedReason: call.endedReason,
  startedAt: call.startedAt,
  endedAt: call.endedAt,
  recordingUrl: call.artifact?.recordingUrl ?? call.recordingUrl,
  transcript: call.artifact?.transcript ?? call.transcript,
  summary: call.analysis?.summary ?? call.summary,
  cost: call.cost,
});

function refusal(r: ProviderResponse): string | null {
  if (!isRequestRefusal(r.status)) return null;
  const body = (typeof r.body === 'object' && r.body ? r.body : {}) as { message?: unknown };
  const message = Array.isArray(body.message) ? body.message.join('; ') : String(body.message ?? 'request refused');
  return `vapi_${r.status}: ${message.slice(0, 300)}`;
}

export function createVapiDialer(options: VapiDialerOptions): Dialer {
  const { calls, logger } = options;
  const base = options.baseUrl.replace(/\/+$/, '');
  const headers = { Authorization: `Bearer ${options.apiKey}`, Accept: 'application/json' };
  const callbackBase = options.callbackBaseUrl.replace(/\/+$/, '');
  const serverUrl = withAccount(`${callbackBase}${VAPI_EVENTS_PATH}`, options.connectionId);
  const toolServerUrl = withAccount(`${callbackBase}${VAPI_TOOL_CALLS_PATH}`, options.connectionId);

  function assistantFor(request: CallRequest): Record<string, unknown> {
    try {
      return renderVapiAssistant(request.agent_config, {
        agentId: request.agent_id,
        initialContext: request.initial_context,
        serverUrl,
        toolServerUrl,
        serverSecret: options.webhookSecret,
      });
    } catch (error) {
      // A configuration the agent API would refuse (the contact's overrides over the version): this call can never be placed.
      throw new CallRejected(`agent_config_invalid: ${(error as Error).message}`.slice(0, 500));
    }
  }

  const get = (path: string, what: string) => exchange(`${base}${path}`, { method: 'GET', headers }, options.timeoutMs, what);

  /** A call an earlier request of this key placed although its answer was lost, found by the key in its metadata. */
  async function findPlaced(row: ProviderCall): Promise<string | null> {
    const since = new Date(row.requested_at.getTime() - 60_000).toISOString();
    const query = new URLSearchParams({ phoneNumberId: options.phoneNumberId, createdAtGe: since, limit: '1000' });
    const response = await get(`/call?${query}`, 'Vapi list calls');
    expectOk(response, 'Vapi list calls', () => null);
    const list = Array.isArray(response.body) ? (response.body as VapiCall[]) : [];
    return list.find((c) => c.metadata?.idempotency_key === row.idempotency_key)?.id ?? null;
  }

  return {
    name: 'vapi',

    async placeCall(request: CallRequest): Promise<PlacedCall> {
      const assistant = assistantFor(request);
      const row = await calls.begin({
        idempotency_key: request.idempotency_key,
        org_id: request.org_id,
        provider: 'vapi',
        phone_number: request.to,
        from_number: null,
      });
      if (row.provider_call_id) return { provider_call_id: row.provider_call_id };
      if (row.requests > 1) {
        const id = await findPlaced(row);
        if (id) {
          await calls.placed('vapi', request.idempotency_key, id);
          return { provider_call_id: id };
        }
      }
      const body = {
        phoneNumberId: options.phoneNumberId,
        customer: { number: request.to },
        assistant,
        metadata: {
          idempotency_key: request.idempotency_key,
          org_id: request.org_id,
          campaign_id: request.campaign_id,
          contact_id: request.contact_id,
          attempt: request.attempt,
          agent_id: request.agent_id,
          agent_version: request.agent_version,
        },
      };
      const response = await exchange(
        `${base}/call`,
        { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) },
        options.timeoutMs,
        'Vapi create call',
      );
      expectOk(response, 'Vapi create call', refusal);
      const id = (response.body as { id?: string }).id;
      if (!id) throw new Error('Vapi create call answered without a call id');
      await calls.placed('vapi', request.idempotency_key, id);
      return { provider_call_id: id };
    },

    reconcile: (orgId: string, keys: string[]) =>
      reconcileCalls({ calls, logger, provider: 'Vapi', afterMs: options.reconcileAfterMs }, orgId, keys, async (row) => {
        const response = await get(`/call/${encodeURIComponent(row.provider_call_id!)}`, 'Vapi get call');
        expectOk(response, 'Vapi get call', () => null);
        return vapiEvent(row.idempotency_key, vapiCallReport(response.body as VapiCall));
      }),
  };
}
