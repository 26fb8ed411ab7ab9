import { displayUrl, escapeHtml, telUri, type CardContent } from './cards';

// Email-signature markup. Mail clients (Outlook's Word engine, Gmail's sanitizer) keep little of
// modern HTML: layout is nested tables, every style is inline, images carry absolute URLs with width,
// height and alt, fonts are web-safe stacks, and nothing depends on CSS classes, <style> or script.

export const SIGNATURE_LAYOUTS = ['horizontal', 'stacked', 'compact'] as const;
export type SignatureLayout = (typeof SIGNATURE_LAYOUTS)[number];

export interface SignatureOptions {
  layout: SignatureLayout;
  include_photo: boolean;
  include_logo: boolean;
  include_links: boolean;
}

const FONT = 'font-family:Arial,Helvetica,sans-serif';
const PHOTO_SIZE = 80;
const LOGO_HEIGHT = 32;

const cell = (style: string, content: string) => `<td style="${style}">${content}</td>`;
const row = (content: string) => `<tr>${content}</tr>`;
const table = (content: string, style = '') =>
  `<table cellpadding="0" cellspacing="0" border="0" role="presentation" style="border-collapse:collapse;${style}">${content}</table>`;

function anchor(href: string, text: string, color: string): string {
  return `<a href="${escapeHtml(href)}" style="color:${color};text-decoration:none">${escapeHtml(text)}</a>`;
}

function image(src: string, alt: string, width: number | null, height: number, extra = ''): string {
  const size = `${width === null ? '' : `width="${width}" `}height="${height}"`;
  return `<img src="${escapeHtml(src)}" alt="${escapeHtml(alt)}" ${size} style="display:block;border:0;outline:none;${extra}">`;
}

/** The line that opens the card (its tracked signature link). */
const CARD_LINK_TEXT = 'View my card';

function contactLines(card: CardContent, options: SignatureOptions, cardUrl: string | null = null): string[] {
  const accent = card.accent_color;
  const lines: string[] = [];
  if (cardUrl) lines.push(anchor(cardUrl, CARD_LINK_TEXT, accent));
  if (card.phone) lines.push(anchor(telUri(card.phone), card.phone, '#374151'));
  if (card.email) lines.push(anchor(`mailto:${card.email}`, card.email, accent));
  if (card.website) lines.push(anchor(card.website, displayUrl(card.website), accent));
  if (options.include_links && card.links.length > 0) {
    lines.push(card.links.map((link) => anchor(link.url, link.label, accent)).join('&nbsp;&nbsp;|&nbsp;&nbsp;'));
  }
  return lines;
}

function nameBlock(card: CardContent): string {
  const role = [card.title, card.company]
    .filter((v): v is string => Boolean(v))
    .map(escapeHtml)
    .join(' | ');
  return (
    `<div style="${FONT};font-size:16px;font-weight:bold;color:${card.primary_color};line-height:20px">${escapeHtml(card.name)}</div>` +
    (role ? `<div style="${FONT};font-size:13px;color:#6b7280;line-height:18px">${role}</div>` : '')
  );
}

function detailsCell(card: CardContent, options: SignatureOptions, cardUrl: string | null, extraStyle = ''): string {
  const lines = contactLines(card, options, cardUrl)
    .map((line) => `<div style="${FONT};font-size:13px;color:#374151;line-height:18px">${line}</div>`)
    .join('');
  const logo =
    options.include_logo && card.logo_url
      ? `<div style="padding-top:8px">${image(card.logo_url, card.company ?? card.name, null, LOGO_HEIGHT)}</div>`
      : '';
  return cell(`vertical-align:top;${extraStyle}`, `${nameBlock(card)}<div style="padding-top:6px">${lines}</div>${logo}`);
}

function photoCell(card: CardContent, style: string): string {
  return cell(style, image(card.photo_url!, card.name, PHOTO_SIZE, PHOTO_SIZE, 'border-radius:40px'));
}

/**
 * The signature as one self-contained HTML fragment (a table), ready to paste into a mail client; with a
 * `cardUrl`, a "View my card" link opens the card through its tracked signature link.
 */
export function renderSignatureHtml(card: CardContent, options: SignatureOptions, cardUrl: string | null = null): string {
  const photo = options.include_photo && card.photo_url && options.layout !== 'compact';
  const border = `border-left:3px solid ${card.accent_color};padding-left:12px`;
  switch (options.layout) {
    case 'stacked':
      return table((photo ? row(photoCell(card, 'padding-bottom:8px')) : '') + row(detailsCell(card, options, cardUrl)));
    case 'compact': {
      const parts = [
        `<strong style="color:${card.primary_color}">${escapeHtml(card.name)}</strong>`,
        ...[card.title, card.company].filter((v): v is string => Boolean(v)).map(escapeHtml),
        ...contactLines(card, { ...options, include_links: false }, cardUrl),
      ];
      return table(row(cell(`${FONT};font-size:13px;color:#374151;line-height:18px`, parts.join(' &middot; '))));
    }
    case 'horizontal':
      return table(
        row((photo ? photoCell(card, 'vertical-align:top;padding-right:12px') : '') + detailsCell(card, options, cardUrl, border)),
      );
  }
}

/** The plain-text alternative, for clients and messages without HTML. */
export function renderSignatureText(card: CardContent, options: SignatureOptions, cardUrl: string | null = null): string {
  const lines = [card.name];
  const role = [card.title, card.company].filter(Boolean).join(' | ');
  if (role) lines.push(role);
  if (cardUrl) lines.push(`${CARD_LINK_TEXT}: ${cardUrl}`);
  if (card.phone) lines.push(card.phone);
  if (card.email) lines.push(card.email);
  if (card.website) lines.push(card.website);
  if (options.include_links) for (const link of card.links) lines.push(`${link.label}: ${link.url}`);
  // Control characters are never part of a signature line.
  return `-- \n${lines.map((line) => line.replace(/[\u0000-\u001f\u007f]/g, ' ')).join('\n')}\n`;
}

/** A complete HTML document around the fragment, for opening the signature in a browser and copying it. */
export function signatureDocument(card: CardContent, fragment: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(card.name)} signature</title></head><body style="margin:16px;background:#ffffff">${fragment}</body></html>`;
}
