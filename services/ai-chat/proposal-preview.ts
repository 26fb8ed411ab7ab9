import { getAccount } from '../../db/accounts';
import type { Sql } from '../../db/client';
import { getContact } from '../../db/contacts';
import { getDeal } from '../../db/deals';
import type { ToolInput, WriteTool } from '../../domain/ai-chat';

/** One field of a proposed change as the approval card shows it. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface ProposalPreview {
  toolCallId: string;
  tool: WriteTool;
  target: { entity: 'account' | 'contact' | 'deal'; id: string; name: string };
  changes: FieldChange[];
}

const diff = (row: Record<string, unknown>, changes: Record<string, unknown>): FieldChange[] =>
  Object.entries(changes).map(([field, after]) => ({ field, before: row[field] ?? null, after }));

const personName = (row: { first_name: string | null; last_name: string | null; email: string | null }) =>
  [row.first_name, row.last_name].filter(Boolean).join(' ') || row.email || 'contact';

/**
 * What a proposal would change, read now: each field it names with its current value and the new one
 * (a new record: each field from nothing). The card shows exactly these, so a person approves what will
 * be written. Undefined when the record is gone (the proposal is then refused anyway).
 */
export async function proposalPreview(
  sql: Sql,
  orgId: string,
  toolCallId: string,
  tool: WriteTool,
  input: unknown,
): Promise<ProposalPreview | undefined> {
  switch (tool) {
    case 'update_account': {
      const { account_id, changes } = input as ToolInput<'update_account'>;
      const row = await getAccount(sql, orgId, account_id);
      return row && { toolCallId, tool, target: { entity: 'account', id: row.id, name: row.name }, changes: diff(row as never, changes) };
    }
    case 'update_contact': {
      const { contact_id, changes } = input as ToolInput<'update_contact'>;
      const row = await getContact(sql, orgId, contact_id);
      return (
        row && { toolCallId, tool, target: { entity: 'contact', id: row.id, name: personName(row) }, changes: diff(row as never, changes) }
      );
    }
    case 'update_deal': {
      const { deal_id, changes } = input as ToolInput<'update_deal'>;
      const row = await getDeal(sql, orgId, deal_id);
      return row && { toolCallId, tool, target: { entity: 'deal', id: row.id, name: row.name }, changes: diff(row as never, changes) };
    }
    case 'move_deal_stage': {
      const { deal_id, stage } = input as ToolInput<'move_deal_stage'>;
      const row = await getDeal(sql, orgId, deal_id);
      return (
        row && {
          toolCallId,
          tool,
          target: { entity: 'deal', id: row.id, name: row.name },
          changes: [{ field: 'stage', before: row.stage, after: stage }],
        }
      );
    }
    case 'create_activity':
    case 'create_contact': {
      const { account_id, ...fields } = input as ToolInput<'create_activity'> | ToolInput<'create_contact'>;
      const row = await getAccount(sql, orgId, account_id);
      return (
        row && {
          toolCallId,
          tool,
          target: { entity: 'account', id: row.id, name: row.name },
          changes: Object.entries(fields).map(([field, after]) => ({ field, before: null, after })),
        }
      );
    }
  }
}
