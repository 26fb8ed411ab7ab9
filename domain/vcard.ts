import { splitName, type CardContent } from './cards';

// vCard 3.0 (RFC 2426): the version every phone's contacts app imports. Text values escape backslash,
// comma, semicolon and newlines; lines end in CRLF and fold at 75 octets without splitting a character.

const escapeText = (value: string) =>
  value
    .replace(/\\/g, '\\\\')
    .replace(/\r\n|\r|\n/g, '\\n')
    .replace(/[,;]/g, (c) => `\\${c}`)
    .replace(/[\u0000-\u001f\u007f]/g, '');

/** A URI value: not text-escaped, but it may not break the line or the property. */
const uriValue = (value: string) => value.replace(/[\u0000-\u001f\u007f]/g, '');

const UTF8 = new TextEncoder();

function fold(line: string): string {
  const out: string[] = [];
  let current = '';
  let bytes = 0;
  for (const char of line) {
    const size = UTF8.encode(char).length;
    const limit = out.length === 0 ? 75 : 74; // continuation lines start with a space
    if (bytes + size > limit) {
      out.push(current);
      current = '';
      bytes = 0;
    }
    current += char;
    bytes += size;
  }
  out.push(current);
  return out.join('\r\n ');
}

export function renderVcard(card: CardContent): string {
  const { first_name, last_name } = splitName(card.name);
  const lines = [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `N:${escapeText(last_name ?? '')};${escapeText(first_name)};;;`,
    `FN:${escapeText(card.name)}`,
  ];
  if (card.company) lines.push(`ORG:${escapeText(card.company)}`);
  if (card.title) lines.push(`TITLE:${escapeText(card.title)}`);
  if (card.email) lines.push(`EMAIL;TYPE=INTERNET,PREF:${escapeText(card.email)}`);
  if (card.phone) lines.push(`TEL;TYPE=CELL,VOICE:${escapeText(card.phone)}`);
  if (card.website) lines.push(`URL:${uriValue(card.website)}`);
  card.links.forEach((link, i) => {
    lines.push(`item${i + 1}.URL:${uriValue(link.url)}`, `item${i + 1}.X-ABLabel:${escapeText(link.label)}`);
  });
  if (card.photo_url) lines.push(`PHOTO;VALUE=URI:${uriValue(card.photo_url)}`);
  if (card.bio) lines.push(`NOTE:${escapeText(card.bio)}`);
  lines.push('END:VCARD');
  return `${lines.map(fold).join('\r\n')}\r\n`;
}

/** A file name for the download: the card's name in safe characters. */
export function vcardFilename(card: Pick<CardContent, 'name'>): string {
  const base = card.name
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-')
    .slice(0, 60);
  return `${base || 'contact'}.vcf`;
}
