import { describe, expect, it } from 'vitest';
import {
  cleanReferrer,
  conversionRate,
  eachDay,
  parseMediaKey,
  sniffImageType,
  splitName,
  zeroCounts,
  type CardContent,
} from '../../domain/cards';
import { renderVcard } from '../../domain/vcard';
import { RateLimiter } from '../../platform/core/rate-limit';

const card: CardContent = {
  id: '0190c0de-0000-7000-8000-00000000beef',
  name: 'Zoë Ünïcode-Name',
  title: null,
  company: null,
  email: null,
  phone: null,
  website: null,
  bio: `line one\nline two; with, punctuation \\ and a very long tail that goes on and on past seventy-five octets for sure ééé`,
  links: [],
  photo_url: null,
  logo_url: null,
  primary_color: '#000000',
  accent_color: '#000000',
};

describe('RateLimiter', () => {
  it('allows `limit` takes per window, then tells how long to wait, then starts over', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter({ limit: 2, windowSeconds: 10, now: () => now });
    expect(limiter.take('k')).toEqual({ ok: true });
    expect(limiter.take('k')).toEqual({ ok: true });
    expect(limiter.take('k')).toEqual({ ok: false, retryAfterSeconds: 10 });
    expect(limiter.take('other')).toEqual({ ok: true });
    now += 9_500;
    expect(limiter.take('k')).toEqual({ ok: false, retryAfterSeconds: 1 });
    now += 500;
    expect(limiter.take('k')).toEqual({ ok: true });
  });

  it('keeps at most maxKeys windows', () => {
    const limiter = new RateLimiter({ limit: 1, windowSeconds: 60, maxKeys: 2 });
    limiter.take('a');
    limiter.take('b');
    limiter.take('c'); // drops a
    expect(limiter.take('a')).toEqual({ ok: true });
  });
});

describe('vCard', () => {
  it('escapes text values and folds lines at 75 octets with CRLF', () => {
    const text = renderVcard(card);
    for (const line of text.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    const unfolded = text.replace(/\r\n /g, '');
    expect(unfolded).toContain('NOTE:line one\\nline two\\; with\\, punctuation \\\\ and a very long tail');
    expect(unfolded).toContain('N:Ünïcode-Name;Zoë;;;');
    expect(text).not.toMatch(/[^\r]\n/);
  });
});

describe('card rules', () => {
  it('accepts only the allowlisted media key shape', () => {
    const id = '0190c0de-0000-7000-8000-00000000beef';
    expect(parseMediaKey(`cards/${id}/${id}.webp`)).toEqual({ cardId: id, contentType: 'image/webp' });
    for (const key of [
      `cards/${id}/${id}.svg`,
      `cards/${id}/../${id}.png`,
      `cards/${id.toUpperCase()}/${id}.png`,
      `x/cards/${id}/${id}.png`,
      `cards/${id}/${id}.png\n`,
    ]) {
      expect(parseMediaKey(key), key).toBeUndefined();
    }
  });

  it('sniffs image types by magic number', () => {
    expect(sniffImageType(Buffer.from('89504e470d0a1a0a0000', 'hex'))).toBe('image/png');
    expect(sniffImageType(Buffer.from('ffd8ffe000', 'hex'))).toBe('image/jpeg');
    expect(sniffImageType(Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 ')]))).toBe('image/webp');
    expect(sniffImageType(Buffer.from('<svg'))).toBeUndefined();
  });

  it('keeps only scheme, host and path of a referrer', () => {
    expect(cleanReferrer('https://a.example/p/q?token=x#f')).toBe('https://a.example/p/q');
    expect(cleanReferrer('javascript:alert(1)')).toBeNull();
    expect(cleanReferrer('not a url')).toBeNull();
  });

  it('splits names, counts days and rates conversion', () => {
    expect(splitName('  Ada  ')).toEqual({ first_name: 'Ada', last_name: null });
    expect(splitName('Grace Brewster Hopper')).toEqual({ first_name: 'Grace Brewster', last_name: 'Hopper' });
    expect(eachDay('2024-02-28', '2024-03-01')).toEqual(['2024-02-28', '2024-02-29', '2024-03-01']);
    expect(conversionRate(zeroCounts())).toBeNull();
    expect(conversionRate({ ...zeroCounts(), view: 3, lead_submitted: 1 })).toBe(0.3333);
  });
});
