import { displayUrl, escapeHtml, telUri, type CardContent } from './cards';

// The page a shared link or QR code opens: the card, a "save contact" button (vCard), its links
// (through the click counter) and the lead form. Server-rendered, every card value escaped; the one
// inline script (the form's submit) runs under a per-response CSP nonce, and nothing else may run.

export interface SharePageUrls {
  /** The share link itself, e.g. https://host/share/<token>. */
  share: string;
  /** The attribution query to carry along (`?utm_source=...`), or ''. */
  query: string;
}

const STYLE = `
*{box-sizing:border-box}body{margin:0;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Arial,sans-serif;background:#f3f4f6;color:#111827}
main{max-width:420px;margin:0 auto;padding:24px 16px}
.card{background:#fff;border-radius:16px;overflow:hidden;box-shadow:0 1px 3px rgba(0,0,0,.1)}
.band{height:72px}.head{padding:0 20px 20px;margin-top:-48px}
.photo{width:96px;height:96px;border-radius:48px;border:4px solid #fff;object-fit:cover;background:#e5e7eb;display:block}
.logo{max-height:32px;max-width:120px;float:right;margin-top:56px}
h1,h2{overflow-wrap:anywhere}h1{font-size:22px;margin:12px 0 2px}.role{color:#6b7280;margin:0}.bio{margin:12px 0 0;line-height:1.4}
.actions{display:flex;flex-direction:column;gap:8px;padding:0 20px 20px}
.button{display:block;text-align:center;padding:12px;border-radius:10px;text-decoration:none;font-weight:600}
.primary{color:#fff}.secondary{background:#f3f4f6;color:#111827}
form{background:#fff;border-radius:16px;padding:20px;margin-top:16px;box-shadow:0 1px 3px rgba(0,0,0,.1)}
h2{font-size:17px;margin:0 0 12px}label{display:block;font-size:13px;color:#374151;margin:10px 0 4px}
input,textarea{width:100%;padding:10px;border:1px solid #d1d5db;border-radius:8px;font:inherit}
.consent{display:flex;gap:8px;align-items:flex-start;margin-top:12px}.consent input{width:auto;margin-top:2px}
button{width:100%;margin-top:16px;padding:12px;border:0;border-radius:10px;color:#fff;font:inherit;font-weight:600;cursor:pointer}
#status{margin:12px 0 0;font-size:14px}`;

const SCRIPT = `
document.getElementById('lead').addEventListener('submit', async function (event) {
  event.preventDefault();
  var form = event.target, status = document.getElementById('status');
  var body = { name: form.name.value, email: form.email.value, consent: form.consent.checked };
  ['phone', 'company', 'note'].forEach(function (k) { if (form[k].value.trim()) body[k] = form[k].value; });
  status.textContent = 'Sending…';
  try {
    var res = await fetch(form.action, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (res.ok) { form.reset(); status.textContent = 'Thanks! Your details were shared.'; }
    else if (res.status === 429) status.textContent = 'Too many attempts, please try again in a minute.';
    else status.textContent = 'Please check the fields and try again.';
  } catch (e) { status.textContent = 'Could not send, please try again.'; }
});`;

/**
 * Open Graph and Twitter card tags, so a shared link previews as the person (name, role, photo) in chat
 * apps and social feeds. Only an absolute http(s) image URL is offered as the preview image.
 */
export function previewTags(card: CardContent, urls: SharePageUrls): string {
  const e = escapeHtml;
  const role = [card.title, card.company].filter((v): v is string => Boolean(v)).join(' · ');
  const description = [role, card.bio].filter(Boolean).join(' — ').slice(0, 300) || `Contact details of ${card.name}`;
  const image = card.photo_url && /^https?:\/\//i.test(card.photo_url) ? card.photo_url : null;
  const tags: [string, string, string][] = [
    ['property', 'og:type', 'profile'],
    ['property', 'og:title', card.name],
    ['property', 'og:description', description],
    ['property', 'og:url', urls.share],
    ...(image
      ? ([
          ['property', 'og:image', image],
          ['property', 'og:image:alt', card.name],
        ] as [string, string, string][])
      : []),
    ['name', 'twitter:card', 'summary'],
    ['name', 'twitter:title', card.name],
    ['name', 'twitter:description', description],
    ...(image ? ([['name', 'twitter:image', image]] as [string, string, string][]) : []),
    ['name', 'description', description],
  ];
  return tags.map(([attr, key, value]) => `<meta ${attr}="${key}" content="${e(value)}">`).join('\n');
}

export function renderSharePage(card: CardContent, urls: SharePageUrls, nonce: string): string {
  const e = escapeHtml;
  const role = [card.title, card.company]
    .filter((v): v is string => Boolean(v))
    .map(e)
    .join(' · ');
  const buttons: string[] = [
    `<a class="button primary" style="background:${card.accent_color}" href="${e(`${urls.share}/vcard${urls.query}`)}">Save contact</a>`,
  ];
  if (card.phone) buttons.push(`<a class="button secondary" href="${e(telUri(card.phone))}">Call ${e(card.phone)}</a>`);
  if (card.email) buttons.push(`<a class="button secondary" href="${e(`mailto:${card.email}`)}">Email ${e(card.email)}</a>`);
  if (card.website) buttons.push(`<a class="button secondary" href="${e(card.website)}" rel="noopener">${e(displayUrl(card.website))}</a>`);
  card.links.forEach((link, i) => {
    buttons.push(`<a class="button secondary" href="${e(`${urls.share}/links/${i}${urls.query}`)}" rel="noopener">${e(link.label)}</a>`);
  });
  const photo = card.photo_url ? `<img class="photo" src="${e(card.photo_url)}" alt="${e(card.name)}">` : '<div class="photo"></div>';
  const logo = card.logo_url ? `<img class="logo" src="${e(card.logo_url)}" alt="${e(card.company ?? '')}">` : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${e(card.name)}</title>
${previewTags(card, urls)}<style>${STYLE}</style></head>
<body><main>
<section class="card"><div class="band" style="background:${card.primary_color}"></div>
<div class="head">${logo}${photo}<h1>${e(card.name)}</h1>${role ? `<p class="role">${role}</p>` : ''}${card.bio ? `<p class="bio">${e(card.bio)}</p>` : ''}</div>
<div class="actions">${buttons.join('')}</div></section>
<form id="lead" method="post" action="${e(`${urls.share}/leads${urls.query}`)}">
<h2>Share your details with ${e(card.name)}</h2>
<label for="name">Name</label><input id="name" name="name" required maxlength="200" autocomplete="name">
<label for="email">Email</label><input id="email" name="email" type="email" required maxlength="254" autocomplete="email">
<label for="phone">Phone (optional)</label><input id="phone" name="phone" type="tel" maxlength="50" autocomplete="tel">
<label for="company">Company (optional)</label><input id="company" name="company" maxlength="200" autocomplete="organization">
<label for="note">Note (optional)</label><textarea id="note" name="note" rows="3" maxlength="2000"></textarea>
<div class="consent"><input id="consent" name="consent" type="checkbox" required><label for="consent">I agree that ${e(card.name)} may store these details and contact me.</label></div>
<button type="submit" style="background:${card.accent_color}">Send</button><p id="status" role="status"></p>
</form></main><script nonce="${e(nonce)}">${SCRIPT}</script></body></html>`;
}

/** The response's Content-Security-Policy: only the page's own nonce'd script, images from anywhere https. */
export const sharePageCsp = (nonce: string): string =>
  [
    "default-src 'none'",
    "img-src 'self' https: data:",
    "style-src 'unsafe-inline'",
    `script-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
