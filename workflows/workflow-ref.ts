import type { Workflow } from '@temporalio/workflow';

/**
 * A workflow named for starting, typed by its function: `workflowRef<typeof campaignWorkflow>('campaignWorkflow')`
 * in `<area>-messages.ts` takes only the function's type, so services start it with checked arguments
 * without bundling workflow code. test/unit/workflow-refs.test.ts checks every name against workflows/index.ts.
 */
export interface WorkflowRef<W extends Workflow> {
  readonly name: string;
  /** Never set: carries the function's type to services/workflow-client.ts. */
  readonly workflow?: W;
}

export const workflowRef = <W extends Workflow>(name: string): WorkflowRef<W> => ({ name });
