import { pathToFileURL } from 'node:url';
import { loadConfig } from '../platform/core/config';
import { BuiltinWriter, type LlmWriter } from '../platform/adapters/llm/llm';
import { LocalWriter } from '../platform/adapters/llm/llm-writer-local';
import { COMPARE_SAMPLE, INSTRUCTIONS_SAMPLE, SUMMARY_SAMPLE } from './llm-writers-sample';

// `npm run bench -- llm-writers` (or `node --import tsx bench/llm-writers.ts`): every sample case of each
// LlmWriter feature written by the built-in writer and by the local model, printed side by side for
// judging, with the local model's time per case. LLM_LOCAL_* settings apply.

async function text(pieces: AsyncIterable<string>): Promise<string> {
  let out = '';
  for await (const piece of pieces) out += piece;
  return out;
}

async function timed(write: () => Promise<string>): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const written = await write();
  return { text: written, ms: Math.round(performance.now() - started) };
}

export async function benchLlmWriters(print: (line: string) => void = (l) => process.stderr.write(`${l}\n`)) {
  const writers: LlmWriter[] = [new BuiltinWriter(), new LocalWriter(loadConfig())];
  const cases = [
    ...COMPARE_SAMPLE.map((input, i) => ({ feature: 'compare', i, run: (w: LlmWriter) => text(w.compareVersions(input)) })),
    ...INSTRUCTIONS_SAMPLE.map((input, i) => ({ feature: 'instructions', i, run: (w: LlmWriter) => w.writeInstructions(input) })),
    ...SUMMARY_SAMPLE.map((input, i) => ({ feature: 'summary', i, run: (w: LlmWriter) => w.summariseCompany(input) })),
  ];
  const localMs: Record<string, number[]> = {};
  for (const c of cases) {
    for (const writer of writers) {
      const out = await timed(() => c.run(writer));
      if (writer instanceof LocalWriter) (localMs[c.feature] ??= []).push(out.ms);
      print(`===== ${c.feature} #${c.i + 1} · ${writer instanceof LocalWriter ? `local (${out.ms} ms)` : 'builtin'}\n${out.text.trim()}\n`);
    }
  }
  return { local_ms_per_case: localMs };
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  const result = await benchLlmWriters();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}
