import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/campaigns';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';
import { externalId, newTenant, type Tenant } from '../support/identity';

// An agent answers from the datasets its version names, through the knowledge-base query itself.

let ctx: TestContext;
let site: FakeWebsite;
let t: Tenant;
let other: Tenant;
let returnsDataset: string;
let parkingDataset: string;

const page = (title: string, text: string) => ({
  body: `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`,
});

const call = (method: string, path: string, body?: unknown, token = t.session) => ctx.request(method, path, { token, body });

async function datasetWithPage(name: string, pagePath: string): Promise<string> {
  const dataset = await call('POST', '/knowledge-base/datasets', { name });
  expect(dataset.status, dataset.text).toBe(200);
  const source = await call('POST', '/knowledge-base/sources', { type: 'URL', name: `${name} page`, url: site.url(pagePath) });
  expect(source.status, source.text).toBe(202);
  await waitFor(
    async () => {
      const res = await call('GET', `/knowledge-base/sources/${source.body.id}`);
      return res.body.file_upload_status === 'ready' ? true : undefined;
    },
    60_000,
    `source ${source.body.id} ready`,
  );
  expect((await call('PUT', `/knowledge-base/datasets/${dataset.body.id}/sources/${source.body.id}`)).status).toBe(200);
  return dataset.body.id;
}

async function agentWith(config: Record<string, unknown>, publish = true): Promise<string> {
  const agent = await call('POST', '/core/agents', { name: 'Helpdesk' });
  expect(agent.status, agent.text).toBe(200);
  expect((await call('POST', `/core/agents/${agent.body.id}/versions`, { config })).status).toBe(200);
  if (publish) expect((await call('POST', `/core/agents/${agent.body.id}/versions/1/publish`, {})).status).toBe(200);
  return agent.body.id;
}

beforeAll(async () => {
  site = await startFakeWebsite({
    '/returns': page('Returns', 'Send back any automobile part within thirty days for a full reimbursement.'),
    '/parking': page('Parking', 'Visitors park in the zebra-striped garage behind the clinic.'),
  });
  ctx = await createTestContext({ worker: true, env: { WEB_FETCH_ALLOW_PRIVATE: 'true' } });
  t = await newTenant(ctx);
  other = await newTenant(ctx);
  returnsDataset = await datasetWithPage('Returns', '/returns');
  parkingDataset = await datasetWithPage('Parking', '/parking');
}, 120_000);
afterAll(async () => {
  await ctx?.close();
  await site?.close();
});

describe('POST /core/agents/{id}/knowledge-base/query', () => {
  it('searches the knowledge_base datasets and the knowledge_base tools of the published version', async () => {
    const agentId = await agentWith({
      knowledge_base: { dataset_ids: [returnsDataset] },
      tools: [{ type: 'knowledge_base', name: 'parking', description: 'Where to park', dataset_ids: [parkingDataset] }],
    });
    const parking = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'zebra garage parking' });
    expect(parking.status, parking.text).toBe(200);
    expect(parking.body).toMatchObject({ version: 1, dataset_ids: [returnsDataset, parkingDataset], skipped_dataset_ids: [] });
    expect(parking.body.results[0]).toMatchObject({ dataset_id: parkingDataset });
    expect(parking.body.results[0].content).toContain('zebra-striped garage');

    // The same ranking as the dataset's own query: the top result and its score are identical.
    const direct = await call('POST', `/knowledge-base/datasets/${returnsDataset}/query`, {
      query: 'automobile reimbursement',
      results_count: 1,
    });
    const viaAgent = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, {
      query: 'automobile reimbursement',
      results_count: 1,
    });
    expect(viaAgent.body.results).toEqual(direct.body.results);
  });

  it('orders results by score across datasets and honours results_count', async () => {
    const agentId = await agentWith({ knowledge_base: { dataset_ids: [returnsDataset, parkingDataset], results_count: 1 } });
    const one = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage' });
    expect(one.body.results).toHaveLength(1); // the version's results_count
    const all = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage automobile', results_count: 10 });
    const scores = all.body.results.map((r: { score: number }) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(new Set(all.body.results.map((r: { dataset_id: string }) => r.dataset_id))).toEqual(new Set([returnsDataset, parkingDataset]));
  });

  it('skips and names a dataset deleted since the version was published', async () => {
    const doomed = await datasetWithPage('Doomed', '/parking');
    const agentId = await agentWith({ knowledge_base: { dataset_ids: [doomed, returnsDataset] } });
    expect((await call('DELETE', `/knowledge-base/datasets/${doomed}`)).status).toBe(204);
    const res = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'zebra' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dataset_ids: [returnsDataset], skipped_dataset_ids: [doomed] });
    expect(res.body.results.every((r: { dataset_id: string }) => r.dataset_id === returnsDataset)).toBe(true);
  });

  it('answers 409 without a published version unless one is named, and 404 for an unknown version', async () => {
    const agentId = await agentWith({ knowledge_base: { dataset_ids: [parkingDataset] } }, false);
    const res = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage' });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/published/);
    const named = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage', version: 1 });
    expect(named.status).toBe(200);
    expect(named.body.results[0].dataset_id).toBe(parkingDataset);
    expect((await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage', version: 9 })).status).toBe(404);
  });

  it('never reaches another organization: its agent is 404, and its own agent cannot name our datasets', async () => {
    const agentId = await agentWith({ knowledge_base: { dataset_ids: [parkingDataset] } });
    expect((await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage' }, other.session)).status).toBe(404);

    const theirs = await call('POST', '/core/agents', { name: 'Intruder' }, other.session);
    await call(
      'POST',
      `/core/agents/${theirs.body.id}/versions`,
      { config: { knowledge_base: { dataset_ids: [parkingDataset] } } },
      other.session,
    );
    const res = await call('POST', `/core/agents/${theirs.body.id}/knowledge-base/query`, { query: 'garage', version: 1 }, other.session);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dataset_ids: [], skipped_dataset_ids: [parkingDataset], results: [] });
  });

  it('takes agents:read, refuses a caller without an agents scope, and validates the body', async () => {
    const agentId = await agentWith({ knowledge_base: { dataset_ids: [parkingDataset] } });
    const reader = await ctx.session({ sub: externalId('reader'), org_id: t.org, org_ids: [t.org], permissions: ['agents:read'] });
    expect((await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage' }, reader)).status).toBe(200);
    const crmOnly = await ctx.session({ sub: externalId('crm'), org_id: t.org, org_ids: [t.org], permissions: ['api:read'] });
    expect((await call('POST', `/core/agents/${agentId}/knowledge-base/query`, { query: 'garage' }, crmOnly)).status).toBe(403);
    for (const body of [{}, { query: '' }, { query: 'x', results_count: 51 }, { query: 'x', version: 0 }, { query: 'x', extra: 1 }]) {
      const res = await call('POST', `/core/agents/${agentId}/knowledge-base/query`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });
});
