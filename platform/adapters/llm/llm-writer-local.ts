import { versionChanges, versionLabel } from './agent-version-changes';
import { describeChange } from '../../core/json-diff';
import { type LocalLlm, type LocalLlmConfig, localLlm } from './llm-local';
import type { CompareInput, InstructionInputs, LlmWriter, PageProfile } from './llm';
import type { Logger } from '../../core/logger';

/** The first line of everything the local model writes: which model wrote it, and that it may be wrong. */
export const localNotice = (model: string) =>
  `Written by the local language model ${model.replace(/^local:/, '')} running on this server (small: it can be wrong; check it).`;

/**
 * The LlmWriter features written by the local model. Prompts are short and carry only what the answer
 * needs: a 135M model loses the thread in long prompts and echoes whatever it is shown.
 */
export class LocalWriter implements LlmWriter {
  /** A language model wrote it; which one, the first line of the text says (summaries: `summary_source`). */
  readonly kind = 'llm' as const;
  private readonly llm: LocalLlm;

  constructor(config: LocalLlmConfig, logger?: Logger) {
    this.llm = localLlm(config, logger);
  }

  get modelName(): string {
    return this.llm.name;
  }

  async *compareVersions(input: CompareInput): AsyncIterable<string> {
    const changes = versionChanges(input).map(describeChange);
    const pieces = this.text(
      'You explain to the owner of a phone voice agent what changed between two versions of its settings. Write two to four short plain sentences. Mention only the changes listed.',
      [
        `Agent "${input.agentName}": ${versionLabel(input.from)} → ${versionLabel(input.to)}.`,
        changes.length ? `Changes:\n${changes.map((c) => `- ${c}`).join('\n')}` : 'No changes.',
      ].join('\n'),
      300,
    )[Symbol.asyncIterator]();
    try {
      // The first piece waits for the model, so a busy or missing model fails before anything is sent.
      const first = await pieces.next();
      yield `${localNotice(this.llm.name)}\n`;
      if (!first.done) yield first.value;
      for (let next = await pieces.next(); !next.done; next = await pieces.next()) yield next.value;
    } finally {
      await pieces.return?.(); // a reader that hung up stops the model too
    }
  }

  async writeInstructions(inputs: InstructionInputs): Promise<string> {
    const text = await this.collect(
      'You write the instructions of a phone voice agent for a company. Address the agent as "you". Plain text, short, ready to use. Use only the facts given.',
      JSON.stringify(inputs, null, 1),
      500,
    );
    return `# ${localNotice(this.llm.name)}\n\n${text}`;
  }

  async summariseCompany(page: PageProfile): Promise<string> {
    const facts = [page.title, page.description, page.headings.slice(0, 8).join('; '), page.text.slice(0, 1500)].filter(Boolean).join('\n');
    return this.collect(
      'Say in at most three plain sentences what this company does, using only the website text given.',
      facts || page.url,
      150,
    );
  }

  private async *text(system: string, user: string, maxTokens: number): AsyncIterable<string> {
    const messages = [
      { type: 'system' as const, text: system },
      { type: 'user' as const, text: user },
    ];
    // 0.3, not greedy: at 0 the model repeated one line to the token limit on the judged sample.
    // The runner bounds the call by LLM_CALL_TIMEOUT_MS; a reader that stops reading stops the model.
    for await (const piece of this.llm.stream({ messages, maxTokens, temperature: 0.3 })) {
      if (piece.type === 'text') yield piece.text;
    }
  }

  private async collect(system: string, user: string, maxTokens: number): Promise<string> {
    let out = '';
    for await (const piece of this.text(system, user, maxTokens)) out += piece;
    const text = out.trim();
    if (!text) throw new Error('The local language model returned no text');
    return text;
  }
}
