import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A headless Chromium: CHROMIUM_PATH, else the first of the usual names on PATH; undefined when none. */
export function findChromium(): string | undefined {
  if (process.env.CHROMIUM_PATH && fs.existsSync(process.env.CHROMIUM_PATH)) return process.env.CHROMIUM_PATH;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
      const candidate = path.join(dir, name);
      if (dir && fs.existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

// No sandbox (containers run as root), no GPU, a fixed time budget so pages settle without sleeps.
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--hide-scrollbars', '--no-first-run', '--virtual-time-budget=3000'];

/** The DOM after the page's scripts ran, serialized. */
export async function dumpDom(binary: string, url: string): Promise<string> {
  const { stdout } = await run(binary, [...FLAGS, '--dump-dom', url], { timeout: 30_000, maxBuffer: 10 * 1024 * 1024 });
  return stdout;
}

/** A PNG screenshot of the page at the given window size, written to `file`. */
export async function screenshot(binary: string, url: string, file: string, size = { width: 420, height: 900 }): Promise<Buffer> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await run(binary, [...FLAGS, `--screenshot=${file}`, `--window-size=${size.width},${size.height}`, url], { timeout: 30_000 });
  return fs.readFileSync(file);
}
