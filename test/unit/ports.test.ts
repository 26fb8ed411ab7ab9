import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { ephemeralPortRange, freePort, isPortFree } from '../../dev-servers/ports';

// Ports for the local servers come from below the range outgoing connections take their local ports from, so no
// connection can take one between its pick and its listen.
describe('freePort', () => {
  it('picks free ports below the ephemeral range, and below a given bound', async () => {
    const [low] = ephemeralPortRange();
    const picked = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of picked) {
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(low);
    }
    const bounded = await Promise.all(Array.from({ length: 20 }, () => freePort(low - 10_001)));
    for (const port of bounded) expect(port).toBeLessThanOrEqual(low - 10_001);
  });

  it('answers a port that can be listened on, and isPortFree sees it taken while it is', async () => {
    const port = await freePort();
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    expect(await isPortFree(port)).toBe(false);
    await new Promise((resolve) => server.close(resolve));
    expect(await isPortFree(port)).toBe(true);
  });
});
