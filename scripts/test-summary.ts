import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// `node --import tsx scripts/test-summary.ts <reports dir> <exit code of npm test>`: the last line of
// .ci/run, `N passed, M failed[, K skipped]`, summed over the vitest JSON reports npm test writes (the main
// run, then the Node 24 cross-section). A run that failed where no counted test did (typecheck, import
// rules, OpenAPI lint, the fuzzer, a report never written) counts that step as one failure and names it
// on the line before, so a failed run never reads "0 failed"; so does a green run missing a report. Exits 1
// when anything failed.

/** The reports npm test writes, in the order its steps run. */
export const REPORTS = [
  { file: 'vitest-main.json', step: 'vitest' },
  { file: 'vitest-node24.json', step: 'the Node 24 cross-section' },
] as const;

/** The part of vitest's JSON reporter output the counts come from. */
export type VitestReport = {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: { status: string; assertionResults: { status: string }[] }[];
};

export type Summary = { passed: number; failed: number; skipped: number; notes: string[] };

/** Sums the reports found (undefined = not written); `exitCode` is the test command's. */
export function summarize(reports: (VitestReport | undefined)[], exitCode: number): Summary {
  const summary: Summary = { passed: 0, failed: 0, skipped: 0, notes: [] };
  for (const report of reports) {
    if (!report) continue;
    summary.passed += report.numPassedTests;
    summary.skipped += report.numPendingTests + report.numTodoTests;
    // A file that failed to load (or in a hook before any test) has no failed test: it counts as one.
    const brokenFiles = report.testResults.filter(
      (file) => file.status === 'failed' && !file.assertionResults.some((t) => t.status === 'failed'),
    ).length;
    summary.failed += report.numFailedTests + brokenFiles;
  }
  const missing = REPORTS.filter((_, i) => !reports[i]).map((r) => r.step);
  if (exitCode === 0 && missing.length > 0) {
    // A green run must have counted everything: a step that wrote no report is a broken pipeline.
    summary.failed += 1;
    summary.notes.push(`npm test passed, but ${missing.join(' and ')} wrote no JSON report: the count is incomplete`);
  }
  if (exitCode !== 0 && summary.failed === 0) {
    summary.failed = 1;
    const firstMissing = reports.findIndex((report) => !report);
    summary.notes.push(
      firstMissing === 0
        ? `npm test failed (exit ${exitCode}) before vitest reported: installation, typecheck, import rules or OpenAPI lint (see above)`
        : firstMissing === 1
          ? `npm test failed (exit ${exitCode}) after vitest passed: the fuzzer, or ${REPORTS[1].step} wrote no report (see above)`
          : `npm test failed (exit ${exitCode}) although every counted test passed (see above)`,
    );
  }
  return summary;
}

export function formatSummary({ passed, failed, skipped }: Summary): string {
  return `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
}

function readReport(file: string): VitestReport | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as VitestReport;
  } catch {
    return undefined; // not written (the step never ran) or cut short
  }
}

// Run as a script (not imported by its test); real paths, so a symlinked checkout still matches.
if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url))) {
  const [dir = '.tools/reports', code = '0'] = process.argv.slice(2);
  const summary = summarize(
    REPORTS.map(({ file }) => readReport(path.join(dir, file))),
    Number(code) || 0,
  );
  for (const note of summary.notes) process.stdout.write(`[ci] ${note}\n`);
  process.stdout.write(`${formatSummary(summary)}\n`);
  process.exit(summary.failed > 0 ? 1 : 0);
}
