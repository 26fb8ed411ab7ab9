import { describe, expect, it } from 'vitest';
import { formatSummary, summarize, type VitestReport } from '../../scripts/test-summary';

// The last line of .ci/run: counts summed over the vitest JSON reports of npm test.

const report = (passed: number, failed: number, skipped = 0, brokenFiles = 0): VitestReport => ({
  numPassedTests: passed,
  numFailedTests: failed,
  numPendingTests: skipped,
  numTodoTests: 0,
  testResults: [
    {
      status: failed > 0 ? 'failed' : 'passed',
      assertionResults: [...Array(passed).fill({ status: 'passed' }), ...Array(failed).fill({ status: 'failed' })],
    },
    ...Array(brokenFiles).fill({ status: 'failed', assertionResults: [] }),
  ],
});

describe('test summary', () => {
  it('sums the main run and the Node 24 run: M = 0 when green, skipped only when some were', () => {
    const green = summarize([report(900, 0, 4), report(300, 0)], 0);
    expect(formatSummary(green)).toBe('1200 passed, 0 failed, 4 skipped');
    expect(green.notes).toEqual([]);
    expect(formatSummary(summarize([report(10, 0), report(5, 0)], 0))).toBe('15 passed, 0 failed');
  });

  it('counts failed tests, and a file that failed without a failing test as one', () => {
    expect(formatSummary(summarize([report(10, 2, 0, 1), undefined], 1))).toBe('10 passed, 3 failed');
  });

  it('never says 0 failed for a failed run: the step that failed outside the counted tests counts as one', () => {
    const beforeVitest = summarize([undefined, undefined], 2);
    expect(formatSummary(beforeVitest)).toBe('0 passed, 1 failed');
    expect(beforeVitest.notes[0]).toMatch(/before vitest reported/);
    const fuzzer = summarize([report(900, 0), undefined], 1);
    expect(formatSummary(fuzzer)).toBe('900 passed, 1 failed');
    expect(fuzzer.notes[0]).toMatch(/fuzzer/);
  });

  it('fails a green run that did not write every report, since its count would be incomplete', () => {
    const partial = summarize([report(900, 0), undefined], 0);
    expect(formatSummary(partial)).toBe('900 passed, 1 failed');
    expect(partial.notes[0]).toMatch(/Node 24 cross-section wrote no JSON report/);
  });
});
