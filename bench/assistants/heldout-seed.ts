import type { Sql } from '../../db/client';
import { newId } from '../../platform/core/ids';

/** The seed of one organization in `bench/fixtures/assistants-heldout.json`: records as the API would store them, with their dates. */
export interface HeldOutOrg {
  key: string;
  accounts: {
    name: string;
    domain: string | null;
    website: string | null;
    industry: string | null;
    owner_id: string | null;
    employee_count: number | null;
    tags: string[];
    created_at: string;
  }[];
  contacts: {
    first_name: string;
    last_name: string;
    email: string | null;
    title: string | null;
    department: string | null;
    phone: string | null;
    linkedin_url: string | null;
    source: string | null;
    account: string | null;
    owner_id: string | null;
    created_at: string;
  }[];
  deals: {
    name: string;
    account: string | null;
    contact: string | null;
    stage: string;
    value: number;
    currency: string;
    owner_id: string;
    close_date: string;
    closed_at: string | null;
    created_at: string;
    tags: string[];
  }[];
  activities: {
    type: string;
    subject: string;
    account: string | null;
    contact: string | null;
    deal: string | null;
    duration_minutes: number | null;
    direction: string | null;
    created_by: string;
    created_at: string;
  }[];
  tags: string[];
  campaigns: {
    name: string;
    status: string;
    priority: number;
    max_attempts: number;
    created_at: string;
    closed_at: string | null;
    contacts: { phone: string; status: string }[];
  }[];
}

/** Writes one organization's seed: accounts first, then what refers to them by name. */
export async function seedHeldOutOrg(sql: Sql, orgId: string, org: HeldOutOrg): Promise<void> {
  await sql.begin(async (tx) => {
    const accounts = new Map<string, string>();
    for (const a of org.accounts) {
      const id = newId();
      accounts.set(a.name, id);
      await tx`
        INSERT INTO accounts (id, org_id, name, domain, website, industry, owner_id, employee_count, tags, created_at, updated_at)
        VALUES (${id}, ${orgId}, ${a.name}, ${a.domain}, ${a.website}, ${a.industry}, ${a.owner_id}, ${a.employee_count}, ${a.tags},
                ${a.created_at}, ${a.created_at})`;
    }
    const contacts = new Map<string, string>();
    for (const c of org.contacts) {
      const id = newId();
      contacts.set(`${c.first_name} ${c.last_name}`, id);
      await tx`
        INSERT INTO contacts (id, org_id, account_id, first_name, last_name, email, title, department, phone, linkedin_url, source, owner_id,
                              created_at, updated_at)
        VALUES (${id}, ${orgId}, ${c.account ? accounts.get(c.account)! : null}, ${c.first_name}, ${c.last_name}, ${c.email}, ${c.title},
                ${c.department}, ${c.phone}, ${c.linkedin_url}, ${c.source}, ${c.owner_id}, ${c.created_at}, ${c.created_at})`;
    }
    const deals = new Map<string, string>();
    for (const d of org.deals) {
      const id = newId();
      deals.set(d.name, id);
      await tx`
        INSERT INTO deals (id, org_id, account_id, contact_id, name, stage, value, currency, owner_id, close_date, closed_at, tags, created_at, updated_at)
        VALUES (${id}, ${orgId}, ${d.account ? accounts.get(d.account)! : null}, ${d.contact ? contacts.get(d.contact)! : null}, ${d.name},
                ${d.stage}, ${d.value}, ${d.currency}, ${d.owner_id}, ${d.close_date}, ${d.closed_at}, ${d.tags}, ${d.created_at}, ${d.created_at})`;
    }
    for (const x of org.activities) {
      await tx`
        INSERT INTO activities (id, org_id, account_id, contact_id, deal_id, type, subject, duration_minutes, direction, created_by, created_at)
        VALUES (${newId()}, ${orgId}, ${x.account ? accounts.get(x.account)! : null}, ${x.contact ? contacts.get(x.contact)! : null},
                ${x.deal ? deals.get(x.deal)! : null}, ${x.type}, ${x.subject}, ${x.duration_minutes}, ${x.direction}, ${x.created_by}, ${x.created_at})`;
    }
    for (const name of org.tags) await tx`INSERT INTO tags (id, org_id, name) VALUES (${newId()}, ${orgId}, ${name})`;
    for (const c of org.campaigns) {
      const id = newId();
      await tx`
        INSERT INTO campaigns (id, org_id, name, status, priority, calling_window, max_attempts, retry_backoff_seconds, created_by, modified_by,
                               created_at, updated_at, closed_at)
        VALUES (${id}, ${orgId}, ${c.name}, ${c.status}, ${c.priority}, '{}', ${c.max_attempts}, 600, 'maya', 'maya', ${c.created_at},
                ${c.created_at}, ${c.closed_at})`;
      for (const person of c.contacts) {
        await tx`
          INSERT INTO campaign_contacts (id, org_id, campaign_id, phone_numbers, status, attempts, next_attempt_at, created_at, updated_at)
          VALUES (${newId()}, ${orgId}, ${id}, ${[person.phone]}, ${person.status}, ${person.status === 'pending' ? 0 : 1},
                  ${person.status === 'pending' ? c.created_at : null}, ${c.created_at}, ${c.created_at})`;
      }
    }
  });
}
