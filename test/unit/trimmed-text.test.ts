import { describe, expect, it } from 'vitest';
import { MEETING_URL_PATTERN, meetingPlatform } from '../../domain/meetings';
import { NOT_BLANK_PATTERN, trimmedPattern, trimmedText } from '../../domain/trimmed-text';

// The document states rules the server checks in code as patterns; each pattern must take what the code takes.

const WHITE = [' ', '\t', '\n', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028'];
const OTHER = ['a', 'Z', '\u0085', '\u200b', '\u180e', 'é', '.', '-'];
const sample = (n: number, alphabet: string[]) => {
  let text = '';
  for (let i = 0; i < n; i++) text += alphabet[Math.floor(Math.random() * alphabet.length)];
  return text;
};

describe('trimmed text', () => {
  it('matches its pattern exactly where the trimmed length is 1 to max', () => {
    const schema = trimmedText(5);
    const pattern = new RegExp(trimmedPattern(5), 'u');
    for (let i = 0; i < 20_000; i++) {
      const text = sample(Math.floor(Math.random() * 10), [...WHITE, ...OTHER]);
      expect(pattern.test(text), JSON.stringify(text)).toBe(schema.safeParse(text).success);
    }
  });

  it('with a forbidden character, matches its pattern exactly where the code takes the text', () => {
    const schema = trimmedText(5, '/');
    const pattern = new RegExp(trimmedPattern(5, '/'), 'u');
    for (let i = 0; i < 20_000; i++) {
      const text = sample(Math.floor(Math.random() * 10), [...WHITE, ...OTHER, '/']);
      expect(pattern.test(text), JSON.stringify(text)).toBe(schema.safeParse(text).success);
    }
    expect(schema.safeParse(' a/b ').error?.issues[0]?.message).toBe('must not contain /');
  });

  it('refuses U+0000 and a blank text', () => {
    expect(new RegExp(trimmedPattern(5), 'u').test('a\u0000')).toBe(false);
    expect(new RegExp(NOT_BLANK_PATTERN, 'u').test(' \t ')).toBe(false);
    expect(new RegExp(NOT_BLANK_PATTERN, 'u').test(' x ')).toBe(true);
  });
});

describe('meeting link pattern', () => {
  it('takes only links meetingPlatform takes', () => {
    const pattern = new RegExp(MEETING_URL_PATTERN, 'u');
    const pieces = ['/', '.', '..', '%2e', '%2E', 'a', '1', '123456789', '?', '#', '%', '\\', ' ', 'l/meetup-join/', 'my/', 'j/'];
    for (let i = 0; i < 20_000; i++) {
      const link = `https://${['zoom.us', 'teams.microsoft.com', 'meet.google.com'][i % 3]}/${sample(Math.floor(Math.random() * 6), pieces)}`;
      if (pattern.test(link)) expect(meetingPlatform(link), link).not.toBeNull();
    }
    for (const link of [
      'https://us02web.zoom.us/j/1234567890?pwd=abc',
      'https://meet.google.com/abc-defg-hij',
      'https://teams.microsoft.com/l/meetup-join/19%3ameeting_N2Q%40thread.v2/0?context=%7b%7d',
      'https://teams.live.com/meet/1234567',
    ])
      expect(pattern.test(link), link).toBe(true);
  });
});
