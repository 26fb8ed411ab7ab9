import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import {
  Client,
  Connection,
  ServiceError,
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
  type TLSConfig,
} from '@temporalio/client';
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import type { Config } from './config';
import { type CallBudget, currentRequestScope } from './request-scope';

/**
 * One task queue carries every workflow and activity; its name is TEMPORAL_TASK_QUEUE (default
 * `voice-crm-main`), read from the config by the API, the worker and the tests, so test files can
 * run isolated workers side by side on one server.
 */

/** Every workflow carries its organization, so operators can filter the Temporal UI by tenant. */
export const ORGANIZATION_ID = defineSearchAttributeKey('OrganizationId', SearchAttributeType.KEYWORD);

export const organizationAttribute = (orgId: string) => [{ key: ORGANIZATION_ID, value: orgId }];

/** Address and TLS, in the shape both the client's Connection and the worker's NativeConnection take. */
export function connectionOptions(
  config: Pick<Config, 'TEMPORAL_TLS_CERT_PATH' | 'TEMPORAL_TLS_KEY_PATH' | 'TEMPORAL_TLS_CA_PATH'>,
  address: string,
): { address: string; tls?: TLSConfig } {
  const tls =
    config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH
      ? {
          clientCertPair: {
            crt: fs.readFileSync(config.TEMPORAL_TLS_CERT_PATH),
            key: fs.readFileSync(config.TEMPORAL_TLS_KEY_PATH),
          },
          ...(config.TEMPORAL_TLS_CA_PATH ? { serverRootCACertificate: fs.readFileSync(config.TEMPORAL_TLS_CA_PATH) } : {}),
        }
      : undefined;
  return { address, tls };
}

/** The default of TEMPORAL_REQUEST_TIMEOUT_MS (platform/core/config.ts). */
export const DEFAULT_TEMPORAL_TIMEOUT_MS = 5000;

/**
 * Calls that wait by design: long polls for a workflow's close event or an update's outcome, and
 * updates that wait for their result. The SDK loops on them, so a per-call default would turn a long
 * workflow into an error; they are bounded by the deadline of the request they serve, if any.
 */
const LONG_POLLS = new Set([
  'GetWorkflowExecutionHistory',
  'PollWorkflowExecutionUpdate',
  'UpdateWorkflowExecution',
  'ExecuteMultiOperation',
]);

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/** The Temporal budget of the request being served, if any; its clock starts at its first call. */
const requestBudget = new AsyncLocalStorage<CallBudget>();

/**
 * Runs `fn` (the serving of one request) with one Temporal budget (the API's deadline middleware gives
 * its request scope one instead, api/middleware/deadlines.ts): every call made inside it without a
 * deadline of its own shares one deadline, `timeoutMs` after the first of them, loops and long polls
 * included. Counting from the first call rather than the request's start keeps slow database work
 * before it from eating the budget. Past it a call fails with DEADLINE_EXCEEDED, which the API answers
 * with 503 after rolling back what the request wrote.
 */
export function withRequestDeadline<T>(timeoutMs: number, fn: () => T): T {
  return requestBudget.run({ timeoutMs }, fn);
}

/**
 * Gives every call that has no deadline one: the request's shared deadline while a request is served,
 * otherwise `timeoutMs` from now (long polls excepted, see LONG_POLLS).
 */
export function deadlineInterceptor(timeoutMs: number): GrpcInterceptor {
  // Handing the next call on unchanged is a valid interceptor; the declared type asks for a class instance.
  type Call = ReturnType<GrpcInterceptor>;
  return (options, nextCall) => {
    if (options.deadline !== undefined) return nextCall(options) as Call;
    const budget = requestBudget.getStore() ?? currentRequestScope()?.temporal;
    if (budget) {
      budget.deadline ??= Date.now() + budget.timeoutMs;
      return nextCall({ ...options, deadline: budget.deadline }) as Call;
    }
    const method = options.method_definition.path.slice(options.method_definition.path.lastIndexOf('/') + 1);
    return nextCall(LONG_POLLS.has(method) ? options : { ...options, deadline: Date.now() + timeoutMs }) as Call;
  };
}

/**
 * A client whose connection is made on first use, so the API starts (and answers 503) while Temporal
 * is down. Retries of unavailable calls are few and short, and every call has a deadline (the outer
 * interceptor sets one before the retry interceptor runs, so retries share it): a frozen server costs
 * a call `timeoutMs`, never a hang.
 */
export function createTemporalClient(
  address: string,
  namespace: string,
  options: Omit<ConnectionOptions, 'address'> = {},
  timeoutMs = DEFAULT_TEMPORAL_TIMEOUT_MS,
): Client {
  const retry = makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3, maxJitter: 0.1 }));
  const connection = Connection.lazy({
    ...options,
    address,
    connectTimeout: Math.min(3000, timeoutMs),
    interceptors: [deadlineInterceptor(timeoutMs), retry],
  });
  return new Client({ connection, namespace });
}

const UNAVAILABLE_CODES = new Set([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

/**
 * True for errors that mean "the workflow engine cannot be reached in time", which the API answers
 * with 503. The SDK wraps gRPC failures (ServiceError, WorkflowUpdateRPCTimeoutOrCancelledError), so
 * the cause chain is searched.
 */
export function isTemporalUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (isGrpcServiceError(e)) return UNAVAILABLE_CODES.has(e.code);
    const message = e instanceof Error ? e.message : '';
    if (/Failed to connect|connect ECONNREFUSED|TransportError|Connection refused|Deadline exceeded/i.test(message)) return true;
    if (!(e instanceof ServiceError) && e instanceof Error && e.name !== 'WorkflowUpdateRPCTimeoutOrCancelledError') return false;
  }
  return false;
}

/** Liveness of the Temporal frontend, answered within `timeoutMs` whatever the server does. */
export async function temporalReachable(client: Client, timeoutMs = 2000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  const check = client.connection.withDeadline(deadline, () => client.workflowService.getSystemInfo({}));
  let timer: NodeJS.Timeout | undefined;
  // The first call also connects, under its own connect timeout: the race keeps the bound.
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  try {
    return await Promise.race([check.then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    check.catch(() => {});
  }
}
