import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

/** Resolves true when nothing listens on host:port. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * The kernel's range for the local ports of outgoing connections (Linux's default where it cannot be read). A port
 * the OS hands out for listening comes from this range too, and between the pick and the real listen any outgoing
 * connection (to Postgres, Temporal, S3) may take it as its own end: a suite making thousands of them lost a port so.
 */
export function ephemeralPortRange(): [number, number] {
  try {
    const [low = 0, high = 0] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low > 0 && low <= high) return [low, high];
  } catch {
    // not Linux: the same default
  }
  return [32_768, 60_999];
}

const LOWEST_PICKED = 10_000;

/**
 * A port free right now, picked at random below the ephemeral range (and below `max` when given), where no outgoing
 * connection takes a local port; the OS's own pick when that range is too small or full.
 */
export async function freePort(max?: number): Promise<number> {
  const top = Math.min(ephemeralPortRange()[0] - 1, max ?? Number.POSITIVE_INFINITY);
  for (let tries = 0; top - LOWEST_PICKED >= 1000 && tries < 50; tries++) {
    const port = LOWEST_PICKED + crypto.randomInt(top - LOWEST_PICKED + 1);
    if (await isPortFree(port)) return port;
  }
  return osFreePort();
}

function osFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The preferred port when it is free, otherwise any free port (so two copies can run side by side). */
export async function preferredPort(port: number): Promise<number> {
  return (await isPortFree(port)) ? port : freePort();
}

/** Waits until a TCP connection to host:port succeeds. */
export async function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, host);
      socket.once('connect', () => socket.end(() => resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing answered on ${host}:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
