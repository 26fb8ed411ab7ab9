import type { Db } from './client';

/** A record found by the name a person wrote (as stored, the question parser matched it). */
export interface NamedRecord {
  id: string;
  name: string;
}

export async function accountsNamed(db: Db, orgId: string, name: string): Promise<NamedRecord[]> {
  return db<NamedRecord[]>`SELECT id, name FROM accounts WHERE org_id = ${orgId} AND name = ${name} ORDER BY created_at, id LIMIT 10`;
}

export async function dealsNamed(db: Db, orgId: string, name: string): Promise<NamedRecord[]> {
  return db<NamedRecord[]>`SELECT id, name FROM deals WHERE org_id = ${orgId} AND name = ${name} ORDER BY created_at, id LIMIT 10`;
}

/** The deals of the accounts of that name ("the Stark deal"). */
export async function dealsOfAccountNamed(db: Db, orgId: string, accountName: string): Promise<NamedRecord[]> {
  return db<NamedRecord[]>`
    SELECT d.id, d.name FROM deals d JOIN accounts a ON a.id = d.account_id AND a.org_id = d.org_id
    WHERE d.org_id = ${orgId} AND a.name = ${accountName} ORDER BY d.name, d.id LIMIT 10`;
}

export async function contactsNamed(db: Db, orgId: string, fullName: string): Promise<NamedRecord[]> {
  return db<NamedRecord[]>`
    SELECT id, concat_ws(' ', first_name, last_name) AS name FROM contacts
    WHERE org_id = ${orgId} AND concat_ws(' ', first_name, last_name) = ${fullName} ORDER BY created_at, id LIMIT 10`;
}
