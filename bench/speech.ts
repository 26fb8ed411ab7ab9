import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, findSpeechServer } from '../platform/core/tools';

/**
 * The local speech models (bench/speech/bench_speech.py, in the speech server's own Python): recognizers'
 * word error rate and time on the caller set of bench/fixtures/voice/, the voice's first audio and real-time
 * factor, VAD and turn-model time, and the served latencies. The recognizers it compares with the default are
 * installed first (install_models.py --candidates). Bounded: 40 minutes.
 */
export function benchSpeech(): Record<string, unknown> {
  const command = findSpeechServer();
  if (!command) throw new Error('the speech server is not installed: bash scripts/install-tools.sh speech');
  const candidates = spawnSync(
    command.python,
    [path.join(PROJECT_ROOT, 'voice', 'speech-server', 'install_models.py'), command.models, '--candidates'],
    { stdio: ['ignore', 'inherit', 'inherit'], timeout: 30 * 60_000 },
  );
  if (candidates.status !== 0) throw new Error('the candidate recognizers could not be installed');
  // The caller set's audio is rendered here on first use (espeak-ng and the Piper voice), never committed.
  if (!fs.existsSync(path.join(PROJECT_ROOT, 'bench', 'fixtures', 'voice', 'piper-joe', '01.wav'))) {
    const made = spawnSync(command.python, [path.join(PROJECT_ROOT, 'bench', 'speech', 'make_fixtures.py'), '--models', command.models], {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 20 * 60_000,
    });
    if (made.status !== 0) throw new Error('the caller set could not be rendered (bench/speech/make_fixtures.py; espeak-ng installed?)');
  }
  const run = spawnSync(command.python, [path.join(PROJECT_ROOT, 'bench', 'speech', 'bench_speech.py'), '--models', command.models], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 40 * 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (run.status !== 0) throw new Error(`bench_speech.py ended with ${run.status ?? run.signal}`);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}
