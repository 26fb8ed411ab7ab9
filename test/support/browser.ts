import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { it } from 'vitest';

const run = promisify(execFile);

/**
 * A headless Chromium: CHROMIUM_PATH (when set, that file or none: a wrong path is not silently replaced),
 * else the first of the usual names on PATH; undefined when none.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CHROMIUM_PATH) return fs.existsSync(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    for (const dir of (env.PATH ?? '').split(path.delimiter)) {
      const candidate = path.join(dir, name);
      if (dir && fs.existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Whether a missing browser fails the run: under CI (CI set to anything but "false" or "0") it does; locally the tests skip. */
export function browserRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return !!ci && ci !== 'false' && ci !== '0';
}

/**
 * The Chromium a browser test file drives, or undefined when there is none. Locally the file's suites
 * then skip with a warning; under CI the file gets a failing test that says why, so a machine without
 * the browser cannot pass by skipping (call it at the top level of the file).
 */
export function chromiumFor(suite: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const binary = findChromium(env);
  if (binary) return binary;
  const why = `no chromium binary found (install chromium, e.g. scripts/install-tools.sh chromium, or set CHROMIUM_PATH)`;
  if (browserRequired(env)) {
    it(`${suite}: has a chromium binary (CI=true makes a missing browser a failure)`, () => {
      throw new Error(`${suite}: ${why}`);
    });
  } else {
    console.warn(`${suite} skipped: ${why}`);
  }
  return undefined;
}

// No sandbox (containers run as root), no GPU, a fixed time budget so pages settle without sleeps.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--hide-scrollbars',
  '--no-first-run',
  '--virtual-time-budget=3000',
];

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
