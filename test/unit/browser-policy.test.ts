import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { browserRequired, findChromium } from '../support/browser';

// Browser tests skip on a machine without Chromium, except under CI, where the missing browser fails
// the run (test/support/browser.ts chromiumFor); these are the two decisions it rests on.

describe('browser test policy', () => {
  it('holds every browser test file to it: each finds its browser through chromiumFor', () => {
    const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../browser');
    const files = fs.readdirSync(dir).filter((file) => file.endsWith('.test.ts'));
    expect(files.length).toBeGreaterThan(0);
    const bypassing = files.filter((file) => !/\bchromiumFor\(/.test(fs.readFileSync(path.join(dir, file), 'utf8')));
    expect(bypassing, 'browser test files that would skip under CI without a browser').toEqual([]);
  });

  it('requires the browser under CI=true (or any CI value but false and 0), not locally', () => {
    expect(browserRequired({})).toBe(false);
    expect(browserRequired({ CI: '' })).toBe(false);
    expect(browserRequired({ CI: 'false' })).toBe(false);
    expect(browserRequired({ CI: '0' })).toBe(false);
    expect(browserRequired({ CI: 'true' })).toBe(true);
    expect(browserRequired({ CI: '1' })).toBe(true);
  });

  it('finds chromium on PATH, and takes CHROMIUM_PATH as the only candidate when set', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'browser-policy-'));
    try {
      const binary = path.join(dir, 'chromium');
      fs.writeFileSync(binary, '#!/bin/sh\n', { mode: 0o755 });
      expect(findChromium({ PATH: `/nonexistent${path.delimiter}${dir}` })).toBe(binary);
      expect(findChromium({ PATH: '/nonexistent' })).toBeUndefined();
      expect(findChromium({ PATH: dir, CHROMIUM_PATH: binary })).toBe(binary);
      // A wrong explicit path is a missing browser, not a silent fallback to another one.
      expect(findChromium({ PATH: dir, CHROMIUM_PATH: path.join(dir, 'absent') })).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
