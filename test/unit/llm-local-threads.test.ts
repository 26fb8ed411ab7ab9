import { describe, expect, it } from 'vitest';
import { usableThreads } from '../../platform/adapters/llm/llm-local';

// The local model never gets more threads than the cores left beside the event loop: llama.cpp's threads
// meet at a barrier every step, and one without a core holds up the rest (docs/performance.md).
describe('the local model threads', () => {
  it('are LLM_LOCAL_THREADS, capped at one less than the cores, and at least one', () => {
    expect(usableThreads(1, 2)).toBe(1);
    expect(usableThreads(2, 2)).toBe(1);
    expect(usableThreads(4, 8)).toBe(4);
    expect(usableThreads(16, 8)).toBe(7);
    expect(usableThreads(1, 1)).toBe(1);
  });
});
