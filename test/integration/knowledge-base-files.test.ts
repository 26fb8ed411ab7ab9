import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/context';
import { waitFor } from '../support/campaigns';
import { newTenant, type Tenant } from '../support/identity';

// Every file type a FILE source takes, on the built-in offline embedder and the local-disk store:
// the processor named, the text found by a query, and an unreadable file failed with its reason.

let ctx: TestContext;
let t: Tenant;
let datasetId: string;

/** A one-page PDF whose content stream shows the given line (offsets computed, so the xref is valid). */
function pdfWith(line: string): Buffer {
  const stream = `BT /F1 12 Tf 72 720 Td (${line}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

async function docxWith(paragraphs: string[]): Promise<Buffer> {
  const zip = new JSZip();
  zip.file(
    '[Content_Types].xml',
    `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`,
  );
  zip.file(
    '_rels/.rels',
    `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`,
  );
  const body = paragraphs.map((p) => `<w:p><w:r><w:t>${p}</w:t></w:r></w:p>`).join('');
  zip.file(
    'word/document.xml',
    `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`,
  );
  return zip.generateAsync({ type: 'nodebuffer' });
}

async function fileSource(name: string, contentType: string, content: string | Buffer) {
  const init = await ctx.request('POST', '/files/initiate-upload', { token: t.session, body: { name, content_type: contentType } });
  expect(init.status, init.text).toBe(200);
  const put = await fetch(init.body.upload_url, { method: 'PUT', headers: init.body.upload_headers, body: content });
  expect(put.status).toBeLessThan(300);
  expect((await ctx.request('POST', `/files/${init.body.id}/confirm-upload`, { token: t.session })).status).toBe(200);
  const created = await ctx.request('POST', '/knowledge-base/sources', { token: t.session, body: { type: 'FILE', file_id: init.body.id } });
  expect(created.status, created.text).toBe(202);
  const source = await waitFor(
    async () => {
      const res = await ctx.request('GET', `/knowledge-base/sources/${created.body.id}`, { token: t.session });
      return ['ready', 'failed'].includes(res.body.file_upload_status) ? res.body : undefined;
    },
    60_000,
    `${name} to settle`,
  );
  await ctx.request('PUT', `/knowledge-base/datasets/${datasetId}/sources/${source.id}`, { token: t.session });
  return source;
}

const top = async (query: string) =>
  (await ctx.request('POST', `/knowledge-base/datasets/${datasetId}/query`, { token: t.session, body: { query, results_count: 1 } })).body
    .results[0];

beforeAll(async () => {
  ctx = await createTestContext({ worker: true });
  t = await newTenant(ctx);
  datasetId = (await ctx.request('POST', '/knowledge-base/datasets', { token: t.session, body: { name: 'Files' } })).body.id;
});
afterAll(async () => ctx?.close());

describe('FILE sources of every type, built-in embedder', () => {
  it('binds new datasets to the built-in embedder when none is configured', async () => {
    const res = await ctx.request('GET', `/knowledge-base/datasets/${datasetId}`, { token: t.session });
    expect(res.body.embedding_model).toBe('builtin-hashing-384');
  });

  it('reads PDF, DOCX, CSV, HTML and plain text, naming the processor', async () => {
    const cases: [string, string, string | Buffer, string, string][] = [
      ['manual.pdf', 'application/pdf', pdfWith('The turbine needs lubrication every quarter'), 'pdf', 'turbine lubrication'],
      [
        'policy.docx',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        await docxWith(['Remote work is allowed on Fridays.', 'Laptops are provided.']),
        'docx',
        'remote work Fridays',
      ],
      ['prices.csv', 'text/csv', 'product,price\nespresso machine,499\nmilk frother,59\n', 'csv', 'espresso machine price'],
      [
        'about.html',
        'text/html',
        '<html><body><nav>menu</nav><article><h1>About</h1><p>Founded in Oslo in 1999.</p></article></body></html>',
        'html',
        'founded Oslo',
      ],
      ['notes.txt', 'text/plain', 'The quarterly kickoff happens in the atrium.', 'text', 'kickoff atrium'],
    ];
    for (const [name, type, content, processor, question] of cases) {
      const source = await fileSource(name, type, content);
      expect(source, name).toMatchObject({ file_upload_status: 'ready', file_processor: processor, failure_reason: null });
      const hit = await top(question);
      expect(hit?.source_id, `${name}: ${question}`).toBe(source.id);
    }
    expect((await top('espresso machine price')).content).toContain('product: espresso machine\nprice: 499');
  });

  it('fails an unreadable or unsupported file with the reason, without retrying forever', async () => {
    const broken = await fileSource('broken.pdf', 'application/pdf', 'not a pdf at all');
    expect(broken.file_upload_status).toBe('failed');
    expect(broken.failure_reason).toMatch(/PDF/);
    const image = await fileSource('logo.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    expect(image).toMatchObject({ file_upload_status: 'failed', failure_reason: 'unsupported file type: image/png' });
  });

  it("refuses a file that is not uploaded (409) or not the organization's (404)", async () => {
    const init = await ctx.request('POST', '/files/initiate-upload', {
      token: t.session,
      body: { name: 'x.txt', content_type: 'text/plain' },
    });
    const pending = await ctx.request('POST', '/knowledge-base/sources', {
      token: t.session,
      body: { type: 'FILE', file_id: init.body.id },
    });
    expect(pending.status).toBe(409);
    const other = await newTenant(ctx);
    const foreign = await ctx.request('POST', '/knowledge-base/sources', {
      token: other.session,
      body: { type: 'FILE', file_id: init.body.id },
    });
    expect(foreign.status).toBe(404);
  });
});
