import { describe, expect, it } from 'vitest';
import { CLICK_SCANNER_SECONDS, OPEN_PREFETCH_SECONDS, classifyClick, classifyOpen, instrumentHtml } from '../../domain/outreach/tracking';

const urls = { pixel: 'https://t.example/p.gif', click: (i: number) => `https://t.example/c/${i}?x=1&y=2` };

describe('instrumentHtml', () => {
  it('rewrites web links in document order, keeps everything else byte for byte, and puts the pixel before </body>', () => {
    const html =
      '<html><BODY><A class="x" HREF = "https://a.example/?q=1&amp;r=2">A</A><a href=\'http://b.example\'>B</a>' +
      '<a href=mailto:x@y.z>m</a><a href="#top">t</a><a href="https://u.example/unsub">u</a><a name=n href="https://c.example" href="https://d.example">c</a>' +
      '<img src="https://a.example/i.png"></body></html>';
    const out = instrumentHtml(html, urls, (u) => u.startsWith('https://u.example/'));
    expect(out.links).toEqual(['https://a.example/?q=1&r=2', 'http://b.example', 'https://c.example']);
    expect(out.html).toBe(
      '<html><BODY><A class="x" href="https://t.example/c/0?x=1&amp;y=2">A</A><a href="https://t.example/c/1?x=1&amp;y=2">B</a>' +
        '<a href=mailto:x@y.z>m</a><a href="#top">t</a><a href="https://u.example/unsub">u</a><a name=n href="https://t.example/c/2?x=1&amp;y=2" href="https://d.example">c</a>' +
        '<img src="https://a.example/i.png"><img src="https://t.example/p.gif" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0"></body></html>',
    );
    // Without URLs (tracking off): the same links found, nothing changed.
    expect(instrumentHtml(html, null, (u) => u.startsWith('https://u.example/'))).toEqual({ html, links: out.links });
  });

  it('appends the pixel to a fragment without </body>', () => {
    expect(instrumentHtml('<p>Hi</p>', urls).html).toMatch(/^<p>Hi<\/p><img src="https:\/\/t\.example\/p\.gif"/);
  });
});

describe('machines among openers and clickers', () => {
  const person = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
  const sentAt = new Date('2026-01-01T10:00:00Z');
  const secondsAfter = (s: number) => new Date(sentAt.getTime() + s * 1000);
  const hit = (extra: Partial<Parameters<typeof classifyOpen>[0]> = {}) => ({
    method: 'GET',
    userAgent: person,
    address: '198.51.100.1',
    sentAt,
    at: secondsAfter(3600),
    ...extra,
  });

  it('opens', () => {
    expect(classifyOpen(hit())).toBeNull();
    expect(classifyOpen(hit({ address: '17.1.2.3' }))).toBe('apple_privacy');
    expect(classifyOpen(hit({ address: '::ffff:17.1.2.3' }))).toBe('apple_privacy');
    expect(classifyOpen(hit({ userAgent: 'Mozilla/5.0' }))).toBe('apple_privacy');
    expect(classifyOpen(hit({ at: secondsAfter(OPEN_PREFETCH_SECONDS - 1) }))).toBe('prefetch');
    expect(classifyOpen(hit({ sentAt: null }))).toBe('prefetch');
    expect(classifyOpen(hit({ at: secondsAfter(OPEN_PREFETCH_SECONDS) }))).toBeNull();
    expect(classifyOpen(hit({ userAgent: undefined }))).toBe('bot');
    expect(classifyOpen(hit({ userAgent: 'python-requests/2.31' }))).toBe('bot');
    expect(classifyOpen(hit({ userAgent: 'Mozilla/5.0 (via ggpht.com GoogleImageProxy)' }))).toBeNull();
    expect(classifyOpen(hit({ method: 'HEAD' }))).toBe('head');
  });

  it('clicks', () => {
    expect(classifyClick(hit(), false)).toBeNull();
    expect(classifyClick(hit(), true)).toBe('scanner');
    expect(classifyClick(hit({ at: secondsAfter(CLICK_SCANNER_SECONDS - 1) }), false)).toBe('scanner');
    expect(classifyClick(hit({ userAgent: 'Barracuda Sentinel (EE)' }), false)).toBe('bot');
    // Apple's network carries iCloud Private Relay: a person's click.
    expect(classifyClick(hit({ address: '17.1.2.3' }), false)).toBeNull();
  });
});
