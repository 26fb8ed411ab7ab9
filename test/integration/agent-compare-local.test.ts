import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localNotice } from '../../platform/adapters/llm/llm-writer-local';
import { createTestContext, type TestContext } from '../support/context';
import { newTenant, type Tenant } from '../support/identity';
import { hasLocalModel } from '../support/local-model';

// Version comparison written by the local model (LLM_LOCAL_FEATURES=compare): the stream says which
// model wrote it; a model that cannot take the call is a clean 503 before anything is sent.

const present = hasLocalModel();

async function twoVersions(ctx: TestContext, tenant: Tenant): Promise<string> {
  const call = (path: string, body: unknown) => ctx.request('POST', path, { token: tenant.session, body });
  const agent = (await call('/core/agents', { name: 'Desk' })).body as { id: string };
  expect((await call(`/core/agents/${agent.id}/versions`, { config: { first_message: 'Hi' } })).status).toBe(200);
  expect((await call(`/core/agents/${agent.id}/versions`, { config: { first_message: 'Hello' } })).status).toBe(200);
  return agent.id;
}

describe.skipIf(!present)('compare written by the local model', () => {
  let ctx: TestContext;
  let tenant: Tenant;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { LLM_LOCAL_FEATURES: 'compare', LLM_LOCAL_THREADS: '1', LLM_LOCAL_CONTEXT_SIZE: '1024' } });
    tenant = await newTenant(ctx);
  });
  afterAll(() => ctx?.close());

  it('streams text/plain whose first line names the local model', async () => {
    const agentId = await twoVersions(ctx, tenant);
    const res = await ctx.request('POST', `/core/agents/${agentId}/versions/compare`, {
      token: tenant.session,
      body: { from_version: 1, to_version: 2 },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const [first, ...rest] = res.text.split('\n');
    expect(first).toBe(localNotice('local:SmolLM2-135M-Instruct-Q4_1'));
    expect(rest.join('\n').trim()).not.toBe('');
  });
});

describe('compare when the local model cannot answer', () => {
  let ctx: TestContext;
  let tenant: Tenant;
  beforeAll(async () => {
    ctx = await createTestContext({ env: { LLM_LOCAL_FEATURES: 'compare', LLM_LOCAL_MODEL_PATH: '.tools/models/not-installed.gguf' } });
    tenant = await newTenant(ctx);
  });
  afterAll(() => ctx?.close());

  it('is a 503 with a detail, sent before any text', async () => {
    const agentId = await twoVersions(ctx, tenant);
    const res = await ctx.request('POST', `/core/agents/${agentId}/versions/compare`, {
      token: tenant.session,
      body: { from_version: 1, to_version: 2 },
    });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: 'The local language model is not installed on this server (scripts/install-tools.sh llm)' });
  });
});
