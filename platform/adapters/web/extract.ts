import { parse as parseCsv } from 'csv-parse/sync';
import { LINE_BREAKING, squash, walkHtmlText } from './html-text';

/** Which extractor read a document: shown as a source's `file_processor`. */
export type FileProcessor = 'text' | 'markdown' | 'html' | 'pdf' | 'docx' | 'csv';

export interface Extracted {
  text: string;
  processor: FileProcessor;
}

/** The document cannot be read as its type says (corrupt PDF, not a DOCX, unsupported type): not worth a retry. */
export class ExtractionError extends Error {
  override name = 'ExtractionError';
}

const BY_TYPE: [RegExp, FileProcessor][] = [
  [/^application\/pdf\b/i, 'pdf'],
  [/^application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document\b/i, 'docx'],
  [/^text\/csv\b|^application\/csv\b/i, 'csv'],
  [/^text\/markdown\b|^text\/x-markdown\b/i, 'markdown'],
  [/^text\/html\b|^application\/xhtml\+xml\b/i, 'html'],
  [/^text\/|^application\/json\b/i, 'text'],
];
const BY_EXTENSION: Record<string, FileProcessor> = {
  pdf: 'pdf',
  docx: 'docx',
  csv: 'csv',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  txt: 'text',
  text: 'text',
  json: 'text',
};

/** The extractor for a file, from its media type, else its name's extension. */
export function processorFor(contentType: string | null, name: string): FileProcessor | undefined {
  const byType = contentType ? BY_TYPE.find(([pattern]) => pattern.test(contentType))?.[1] : undefined;
  if (byType && !(byType === 'text' && /^application\/octet-stream/i.test(contentType ?? ''))) return byType;
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase();
  return extension ? BY_EXTENSION[extension] : undefined;
}

export async function extractText(bytes: Buffer, processor: FileProcessor): Promise<Extracted> {
  switch (processor) {
    case 'pdf':
      return { text: await pdfText(bytes), processor };
    case 'docx':
      return { text: await docxText(bytes), processor };
    case 'csv':
      return { text: csvText(bytes.toString('utf8')), processor };
    case 'html':
      return { text: htmlMainText(bytes.toString('utf8')), processor };
    case 'markdown':
      return { text: markdownText(bytes.toString('utf8')), processor };
    case 'text':
      return { text: bytes.toString('utf8'), processor };
  }
}

async function pdfText(bytes: Buffer): Promise<string> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  let document: Awaited<ReturnType<typeof pdfjs.getDocument>['promise']>;
  try {
    document = await pdfjs.getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false, verbosity: 0 })
      .promise;
  } catch (error) {
    throw new ExtractionError(`not a readable PDF: ${(error as Error).message}`);
  }
  const pages: string[] = [];
  for (let n = 1; n <= document.numPages; n++) {
    const page = await document.getPage(n);
    const content = await page.getTextContent();
    let line = '';
    const lines: string[] = [];
    for (const item of content.items) {
      if (!('str' in item)) continue;
      line += item.str;
      if (item.hasEOL) {
        lines.push(line);
        line = '';
      }
    }
    if (line) lines.push(line);
    pages.push(lines.join('\n'));
  }
  await document.destroy();
  return pages.join('\n\n');
}

async function docxText(bytes: Buffer): Promise<string> {
  const mammoth = await import('mammoth');
  try {
    const result = await mammoth.extractRawText({ buffer: bytes });
    return result.value;
  } catch (error) {
    throw new ExtractionError(`not a readable DOCX: ${(error as Error).message}`);
  }
}

/** Each row as "column: value" lines, rows separated by blank lines, so a chunk keeps the header's meaning. */
function csvText(text: string): string {
  let rows: string[][];
  try {
    rows = parseCsv(text, { relax_column_count: true, skip_empty_lines: true, bom: true });
  } catch (error) {
    throw new ExtractionError(`not a readable CSV: ${(error as Error).message}`);
  }
  const [header, ...data] = rows;
  if (!header) return '';
  if (data.length === 0) return header.join(', ');
  return data.map((row) => row.map((cell, i) => `${header[i] ?? `column ${i + 1}`}: ${cell}`).join('\n')).join('\n\n');
}

/** Markdown as plain text, keeping headings (the structure-aware splitter cuts at them) and paragraphs. */
function markdownText(text: string): string {
  return text
    .replace(/```[^\n]*\n([\s\S]*?)```/g, '$1')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/^(#{1,6})\s*(.+?)\s*#*$/gm, '$1 $2')
    .replace(/^\s*[-*+]\s+/gm, '- ')
    .replace(/(\*\*|__|`)/g, '');
}

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'head', 'nav', 'footer', 'aside', 'form', 'button']);
const BLOCKS = new Set<string>([...LINE_BREAKING, 'td', 'th', 'blockquote', 'pre', 'dd', 'dt', 'table', 'ul', 'ol']);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

/**
 * The main text of an HTML page: the content of <main> or <article> when the page has one, else the
 * body without navigation, headers of forms, scripts and footers; headings become Markdown headings so
 * the structure-aware splitter keeps sections together.
 */
export function htmlMainText(html: string): string {
  const collect = (within: Set<string> | undefined) => {
    const parts: string[] = [];
    const walk = walkHtmlText(
      html,
      { skipped: SKIPPED, blocks: BLOCKS, headings: HEADINGS, within },
      {
        text: (data, inHeading) => {
          if (!inHeading) parts.push(data);
        },
        blockBreak: () => parts.push('\n\n'),
        heading: (level, pieces, visible) => {
          const title = squash(pieces.join(''));
          if (title && visible) parts.push(`\n\n${'#'.repeat(level)} ${title}\n\n`);
        },
      },
    );
    const text = parts
      .join('')
      .replace(/[ \t\r\f\v]+/g, ' ')
      .replace(/ *\n */g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    return { text, found: walk.foundWithin };
  };
  const main = collect(new Set(['main', 'article']));
  if (main.found && main.text.length > 0) return main.text;
  return collect(undefined).text;
}
