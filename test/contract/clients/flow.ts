import createClient from 'openapi-fetch';
import type { paths } from './openapi';

// A user's first calls through types openapi-typescript generates from the live document (default settings) and
// openapi-fetch: a new contact is `{ first_name }`, no casts. test/integration/generated-clients.test.ts copies this
// file beside the generated openapi.d.ts, compiles both with tsc --strict, then runs it against the real server.
const client = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { Authorization: `Bearer ${process.env.TOKEN!}` } });

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(what);
}

const created = await client.POST('/contacts', { body: { first_name: 'Ada' } });
check(created.data && created.response.status === 200, `create contact: ${created.response.status} ${JSON.stringify(created.error)}`);
const ada = created.data;
check(ada.first_name === 'Ada' && ada.last_name === null, `created contact: ${JSON.stringify(ada)}`);
console.log('create contact: 200');

const read = await client.GET('/contacts/{contact_id}', { params: { path: { contact_id: ada.id } } });
check(read.data?.id === ada.id && read.data.first_name === 'Ada', `read contact: ${read.response.status}`);
console.log('read contact: 200');

const ids = new Set([ada.id]);
for (const body of [{ last_name: 'Lovelace' }, { email: 'grace@example.com' }]) {
  const made = await client.POST('/contacts', { body });
  check(made.data, `create contact: ${made.response.status}`);
  ids.add(made.data.id);
}
const seen: string[] = [];
let pages = 0;
for (let offset = 0; ; offset += 2) {
  const page = await client.GET('/contacts', { params: { query: { limit: 2, offset } } });
  check(page.data, `list contacts: ${page.response.status} ${JSON.stringify(page.error)}`);
  check(page.response.headers.get('x-total-count') === String(ids.size), `X-Total-Count: ${page.response.headers.get('x-total-count')}`);
  pages++;
  seen.push(...page.data.map((contact) => contact.id));
  if (page.data.length < 2) break;
}
check(seen.length === ids.size && seen.every((id) => ids.has(id)), `paged ids ${seen}, made ${[...ids]}`);
console.log(`page contacts: ${pages} pages`);

const missing = await client.GET('/contacts/{contact_id}', { params: { path: { contact_id: crypto.randomUUID() } } });
check(missing.response.status === 404 && typeof missing.error?.detail === 'string', `missing contact: ${missing.response.status}`);
console.log('missing contact: 404');

const refused = await client.POST('/contacts', { body: { title: 'CEO' } });
const detail = refused.error?.detail;
check(refused.response.status === 422 && Array.isArray(detail), `nameless contact: ${refused.response.status}`);
check(JSON.stringify(detail[0]?.loc) === '["body"]' && detail[0]?.msg.includes('first_name'), `422 item: ${JSON.stringify(detail[0])}`);
console.log('nameless contact: 422');
console.log('flow complete');
