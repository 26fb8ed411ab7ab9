import createClient from 'openapi-fetch';
import type { paths } from './openapi';

// A user's first calls through a client generated from the live document (openapi-typescript, default
// settings) and openapi-fetch: minimal bodies, no casts. Compiled with tsc --strict, then run by
// test/integration/contract-client.test.ts against the real server.
const client = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { Authorization: `Bearer ${process.env.TOKEN!}` } });

function must<T>(what: string, result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  console.log(`${what}: ${result.response.status}`);
  return result.data;
}

const account = must('create account', await client.POST('/accounts', { body: { name: 'Acme' } }));
const contact = must('create contact', await client.POST('/contacts', { body: { first_name: 'Ada', account_id: account.id } }));
const patched = must(
  'patch contact',
  await client.PATCH('/contacts/{contact_id}', { params: { path: { contact_id: contact.id } }, body: { last_name: 'Lovelace' } }),
);
if ('last_name' in patched && patched.last_name !== 'Lovelace') throw new Error('patch did not apply');
const found = must('search accounts', await client.GET('/accounts', { params: { query: { search: 'acme' } } }));
if (!found.some((a) => a.id === account.id)) throw new Error('search did not find the account');
must('create tag', await client.POST('/tags', { body: { name: 'vip' } }));
must('list tags', await client.GET('/tags'));
const agent = must('create agent', await client.POST('/core/agents', { body: { name: 'Caller' } }));
const version = must(
  'create version',
  await client.POST('/core/agents/{id}/versions', { params: { path: { id: agent.id } }, body: { config: {} } }),
);
must(
  'publish version',
  await client.POST('/core/agents/{id}/versions/{version}/publish', {
    params: { path: { id: agent.id, version: String(version.version) } },
  }),
);
must(
  'copy version',
  await client.POST('/core/agents/{id}/versions', { params: { path: { id: agent.id } }, body: { base_version: version.version } }),
);
must('create campaign', await client.POST('/campaign/campaigns', { body: { name: 'Spring', agent_id: agent.id } }));
must('concurrency settings', await client.PUT('/campaign/concurrency-settings', { body: { concurrency_limit: 5 } }));
must('create dataset', await client.POST('/knowledge-base/datasets', { body: { name: 'Docs' } }));
must('create card', await client.POST('/cards', { body: { name: 'Ada Lovelace' } }));
must('create credential', await client.POST('/workflow/credentials', { body: { name: 'crm-token' } }));
console.log('flow complete');
