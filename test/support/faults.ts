import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { freePort } from '../../dev-servers/ports';
import { createTemporalClient, temporalReachable } from '../../platform/core/temporal';
import { findTemporalCli } from '../../platform/core/tools';
import { waitFor } from './campaigns';

// Servers of one fault-test file, which it may freeze, thaw and restart: never the run's shared ones.

/** A process and every process below it (a Postgres postmaster and its backends), from /proc. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while being listed
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!) ?? []));
  return tree;
}

/** SIGSTOPs the whole tree; the returned function SIGCONTs exactly those processes. */
export function freeze(root: number): () => void {
  const pids = processTree(root);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  return () => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
  };
}

export interface OwnTemporal {
  address: string;
  pid: number;
  stop(): Promise<void>;
}

/** A Temporal dev server of this file alone (in memory, no UI), with the OrganizationId attribute. */
export async function startOwnTemporal(): Promise<OwnTemporal> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('temporal CLI not found: run `npm run tools`');
  const port = await freePort();
  const child: ChildProcess = spawn(
    cli,
    [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--log-level',
      'error',
      '--search-attribute',
      'OrganizationId=Keyword',
    ],
    { stdio: 'ignore' },
  );
  const address = `127.0.0.1:${port}`;
  const probe = createTemporalClient(address, 'default');
  try {
    await waitFor(() => temporalReachable(probe, 1000), 60_000, 'own Temporal dev server');
  } finally {
    await probe.connection.close().catch(() => {});
  }
  return {
    address,
    pid: child.pid!,
    async stop() {
      for (const pid of processTree(child.pid!)) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // gone
        }
      }
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * One request written by hand on a fresh socket: fetch refuses TRACE and CONNECT, and Node's client
 * treats a CONNECT answer as a tunnel. The server closes the connection after answering.
 */
export function rawRequest(baseUrl: string, method: string, path: string, timeoutMs = 10_000): Promise<RawResponse> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let body = rest.join('\r\n\r\n');
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const eol = rest.indexOf('\r\n');
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 4 + size);
  }
}

/** Runs `fn`, returning its result with how long it took in milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}
