/**
 * Reads the `text` of a `{"type": "text", "text": "..."}` answer while the model is still writing it,
 * so a grammar-constrained reply streams to the user piece by piece like plain text does. Feed it the
 * raw output as it grows; it returns only what is new and decoded (escapes resolved), holding back
 * an escape or a surrogate pair that is not complete yet.
 */
export class JsonTextStream {
  private raw = '';
  private emitted = 0;
  private static readonly OPENING = /^\s*\{\s*"type"\s*:\s*"text"\s*,\s*"text"\s*:\s*"/;

  /** Adds the next piece of raw output; returns the newly readable text ('' when none). */
  push(piece: string): string {
    this.raw += piece;
    const opening = JsonTextStream.OPENING.exec(this.raw);
    if (!opening) return '';
    const body = this.raw.slice(opening[0].length);
    const decoded = JSON.parse(`"${completePart(body)}"`) as string;
    let end = decoded.length;
    const last = decoded.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate waits for its pair
    if (end <= this.emitted) return '';
    const fresh = decoded.slice(this.emitted, end);
    this.emitted = end;
    return fresh;
  }
}

/** The longest start of a JSON string body made of whole characters and escapes, up to its closing quote. */
function completePart(body: string): string {
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === '"') break;
    if (c === '\\') {
      const width = body[i + 1] === 'u' ? 6 : 2;
      if (i + width > body.length) break;
      i += width;
    } else i += 1;
  }
  return body.slice(0, i);
}
