import { ApplicationFailure } from '@temporalio/common';
import { type FailureKind, isDomainError } from '../domain/errors';
import { LocalModelError } from '../platform/adapters/llm/llm-local';

/**
 * How an activity's failure is retried, in one module. An error a rule recognizes becomes an
 * ApplicationFailure of the rule's type (the name a workflow branches on): non-retryable when no retry
 * can change it (a refused input, a row that is gone, a vendor's final refusal), retryable when the rule
 * says the cause may pass. Any other error is rethrown as it is and retried by the workflow's policy.
 */
export type FailureRule = (error: unknown) => { type: string; message: string; retryable?: boolean } | undefined;

/** A DomainError of `kind` (domain/errors.ts) is final, typed `type`. */
export const onDomain =
  (kind: FailureKind, type: string): FailureRule =>
  (error) =>
    isDomainError(error, kind) ? { type, message: error.detail } : undefined;

/** An error of `errorClass` (and `when` it holds) is typed `type`; final unless `retryable` says otherwise. */
export function onError<E extends Error>(
  // biome-ignore lint/suspicious/noExplicitAny: any constructor of E, whatever its parameters.
  errorClass: abstract new (...args: any[]) => E,
  type: string | ((error: E) => string),
  options: { when?: (error: E) => boolean; retryable?: (error: E) => boolean } = {},
): FailureRule {
  return (error) => {
    if (!(error instanceof errorClass) || (options.when && !options.when(error))) return undefined;
    return {
      type: typeof type === 'string' ? type : type(error),
      message: error.message,
      retryable: options.retryable?.(error) ?? false,
    };
  };
}

/** The failure `error` becomes under `rules`, or the error itself when no rule names it. */
export function classify(error: unknown, rules: readonly FailureRule[]): unknown {
  for (const rule of rules) {
    const failure = rule(error);
    if (failure) return ApplicationFailure.create({ message: failure.message, type: failure.type, nonRetryable: !failure.retryable });
  }
  return error;
}

/** Runs one activity's work, its errors classified by `rules`. */
export async function classified<T>(rules: readonly FailureRule[], work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw classify(error, rules);
  }
}

/** A failure that is final by the activity's own reading of a result (not an error): typed `type`. */
export const finalFailure = (type: string, message: string): ApplicationFailure => ApplicationFailure.nonRetryable(message, type);

/** The local model is not installed: retrying cannot help; the turn ends with this message (both assistants). */
export const MODEL_MISSING = onError(LocalModelError, 'ModelRefused', { when: (e) => e.code === 'missing' });
