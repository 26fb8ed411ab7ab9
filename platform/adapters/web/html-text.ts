import { Parser } from 'htmlparser2';

/**
 * The one walk of an HTML page to its text, on htmlparser2 (a streaming parser, never regular
 * expressions over HTML). Callers give the rules (which elements are skipped, which break the text,
 * which are headings, and optionally the elements outside which nothing counts) and build their own
 * output from what the walk hands them: knowledge-base extraction (`extract.ts`, Markdown headings)
 * and page profiles (`fetch.ts`, title, description, headings and lines).
 */
export interface HtmlTextRules {
  /** Elements whose whole content is left out (scripts, styles, navigation…). */
  skipped: ReadonlySet<string>;
  /** Elements that break the text where they open and where they close. */
  blocks: ReadonlySet<string>;
  /** Elements whose visible text is also collected and handed over when they close. */
  headings: ReadonlySet<string>;
  /** When given, only text inside one of these elements is visible. */
  within?: ReadonlySet<string>;
}

export interface HtmlTextSink {
  /** Visible text, in order; `inHeading` while a heading is open. */
  text(data: string, inHeading: boolean): void;
  /** Where a block element opens or closes. */
  blockBreak(): void;
  /** A heading closed: its visible text pieces, and whether the place it closed in is visible. */
  heading(level: number, pieces: string[], visible: boolean): void;
}

export interface HtmlTextWalk {
  /** The text of <title> (skipped or not), unsquashed. */
  title: string;
  /** The meta description (else og:description), squashed, or null. */
  description: string | null;
  /** Whether one of `within` was met. */
  foundWithin: boolean;
}

export const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Elements that end a line of text for every reader of a page; each reader adds its own (table cells, headings). */
export const LINE_BREAKING = ['p', 'div', 'section', 'article', 'li', 'br', 'tr', 'main', 'header'] as const;

export function walkHtmlText(html: string, rules: HtmlTextRules, sink: HtmlTextSink): HtmlTextWalk {
  const { skipped, blocks, headings, within } = rules;
  const walk: HtmlTextWalk = { title: '', description: null, foundWithin: false };
  let skip = 0;
  let inside = within ? 0 : 1;
  let inTitle = false;
  let heading: string[] | null = null;
  const visible = () => skip === 0 && inside > 0;
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (within?.has(name)) {
          inside++;
          walk.foundWithin = true;
        }
        if (name === 'title') inTitle = true;
        if (name === 'meta') {
          const key = (attrs.name ?? attrs.property ?? '').toLowerCase();
          if ((key === 'description' || (key === 'og:description' && !walk.description)) && attrs.content)
            walk.description = squash(attrs.content);
        }
        if (skipped.has(name)) skip++;
        if (headings.has(name)) heading = [];
        if (blocks.has(name)) sink.blockBreak();
      },
      ontext(data) {
        if (inTitle) walk.title += data;
        if (!visible()) return;
        heading?.push(data);
        sink.text(data, heading !== null);
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (skipped.has(name)) skip = Math.max(0, skip - 1);
        if (headings.has(name) && heading) {
          sink.heading(Number(name[1]), heading, visible());
          heading = null;
        }
        if (blocks.has(name)) sink.blockBreak();
        if (within?.has(name)) inside--;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return walk;
}
