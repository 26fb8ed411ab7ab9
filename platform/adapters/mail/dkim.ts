import crypto from 'node:crypto';

// DKIM signatures (RFC 6376), rsa-sha256 with relaxed/relaxed canonicalization, over a message as it
// will be sent. Written here rather than left to nodemailer because its signer lists each field once and
// only when present, so it cannot over-sign: list a field in `h=` once more than the message carries it,
// which makes a copy of that field added later (prepended, as a receiver reads the topmost) break the
// signature instead of being read as signed (RFC 6376 §8.15, what mail systems do for From).

export interface DkimKey {
  domainName: string;
  keySelector: string;
  /** PKCS#8 (or PKCS#1) PEM of an RSA key. */
  privateKey: string;
}

export interface DkimOptions {
  /** The fields signed, in `h=` order, each as often as the message carries it (absent ones left out). */
  fields: readonly string[];
  /** Fields listed once more than the message carries them (an absent one once): a copy added later fails. */
  overSign: readonly string[];
  /** The signing time (`t=`), seconds since the epoch taken from it. */
  now?: Date;
}

interface HeaderField {
  /** Lower-case name. */
  name: string;
  /** The whole field as written (folded lines included), without the final CRLF. */
  raw: string;
}

/** Header fields of the header block, top to bottom. */
function parseHeader(head: string): HeaderField[] {
  const fields: HeaderField[] = [];
  for (const line of head.split('\r\n')) {
    if (/^[ \t]/.test(line) && fields.length) fields[fields.length - 1]!.raw += `\r\n${line}`;
    else if (line) fields.push({ name: line.slice(0, line.indexOf(':')).trim().toLowerCase(), raw: line });
  }
  return fields;
}

/** Relaxed header canonicalization (RFC 6376 §3.4.2): lower-case name, unfolded, white space runs as one space, trimmed. */
export function relaxedHeader(raw: string): string {
  const colon = raw.indexOf(':');
  const name = raw.slice(0, colon).trim().toLowerCase();
  const value = raw
    .slice(colon + 1)
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim();
  return `${name}:${value}`;
}

/** Relaxed body canonicalization (RFC 6376 §3.4.4): line-end white space dropped, runs as one space, trailing empty lines dropped. */
export function relaxedBody(body: string): string {
  const lines = body.split(/\r?\n/).map((line) => line.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.length ? `${lines.join('\r\n')}\r\n` : '';
}

/** `value` folded into lines of at most `width` characters, continued with a space (white space a verifier ignores there). */
const foldBase64 = (value: string, width = 72) => value.match(new RegExp(`.{1,${width}}`, 'g'))?.join('\r\n ') ?? '';

/**
 * The message (CRLF line ends) with a `DKIM-Signature` field prepended. The header fields in `h=` are
 * taken bottom up for a name listed more than once (RFC 6376 §5.4.2); a listing with no field left
 * signs the empty string, which is what over-signing relies on.
 */
export function dkimSign(message: Buffer, key: DkimKey, options: DkimOptions): Buffer {
  const text = message.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const body = split < 0 ? '' : text.slice(split + 4);
  const fields = parseHeader(head);

  const overSign = new Set(options.overSign.map((f) => f.toLowerCase()));
  const names: string[] = [];
  for (const field of options.fields) {
    const name = field.toLowerCase();
    const present = fields.filter((f) => f.name === name).length;
    const times = present + (overSign.has(name) ? 1 : 0);
    for (let i = 0; i < times; i++) names.push(name);
  }
  // Instances are used bottom up, one per listing; a listing past the last instance signs nothing.
  const next = new Map<string, number>();
  const signed: string[] = [];
  for (const name of names) {
    const instances = fields.filter((f) => f.name === name);
    const used = next.get(name) ?? 0;
    next.set(name, used + 1);
    const field = instances[instances.length - 1 - used];
    if (field) signed.push(`${relaxedHeader(field.raw)}\r\n`);
  }

  const bodyHash = crypto.createHash('sha256').update(relaxedBody(body), 'latin1').digest('base64');
  const time = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tags = [
    'v=1',
    'a=rsa-sha256',
    'c=relaxed/relaxed',
    `d=${key.domainName}`,
    `s=${key.keySelector}`,
    `t=${time}`,
    `h=${names.join(':')}`,
    `bh=${bodyHash}`,
    'b=',
  ];
  const unsigned = `DKIM-Signature: ${tags.join(';\r\n ')}`;
  const signature = crypto
    .createSign('RSA-SHA256')
    .update(signed.join('') + relaxedHeader(unsigned), 'latin1')
    .sign(key.privateKey, 'base64');
  return Buffer.concat([Buffer.from(`${unsigned}${foldBase64(signature)}\r\n`, 'latin1'), message]);
}
