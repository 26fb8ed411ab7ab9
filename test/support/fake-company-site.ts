import { startFakeWebsite, type FakePage, type FakeWebsite } from './fake-website';

export interface CompanySite {
  name: string;
  /** Words that name the industry on the page (e.g. "SaaS software platform"). */
  pitch: string;
  employees: number;
  city: string;
  country: string;
  /** Script URLs in the home page's HTML (technology signatures). */
  scripts: string[];
  email: string;
  phone: string;
}

export const ACME_SOFTWARE: CompanySite = {
  name: 'Acme Cloud',
  pitch: 'The SaaS software platform for field teams',
  employees: 120,
  city: 'Berlin',
  country: 'Germany',
  scripts: ['https://js.hs-scripts.com/123.js', 'https://js.stripe.com/v3/'],
  email: 'hello@acme-cloud.example',
  phone: '+49 30 1234 5678',
};

/** The pages of a company's site: home, about, contact and careers (no /company page: a 404, not a failure). */
export function companyPages(c: CompanySite): Record<string, FakePage> {
  const page = (title: string, body: string, head = '') => ({
    body: `<!doctype html><html><head><title>${title}</title>${head}</head><body><main>${body}</main></body></html>`,
  });
  return {
    '/': page(
      `${c.name} | ${c.pitch}`,
      `<h1>${c.pitch}</h1><p>${c.name} builds cloud software for teams in the field.</p>`,
      `<meta name="description" content="${c.name}: ${c.pitch}."><meta property="og:site_name" content="${c.name}">` +
        c.scripts.map((s) => `<script src="${s}"></script>`).join(''),
    ),
    '/about': page(
      `About ${c.name}`,
      `<h1>About us</h1><p>We are a team of ${c.employees} employees, headquartered in ${c.city}, ${c.country}.</p>`,
    ),
    '/contact': page(
      `Contact ${c.name}`,
      `<h1>Contact</h1><p><a href="mailto:${c.email}">Email us</a> or <a href="tel:${c.phone}">call</a>.</p>`,
    ),
    '/careers': page(`Careers at ${c.name}`, `<h1>Join us</h1><p>Open roles in ${c.city}.</p>`),
  };
}

export async function startCompanySite(c: CompanySite = ACME_SOFTWARE, extra: Record<string, FakePage> = {}): Promise<FakeWebsite> {
  return startFakeWebsite({ ...companyPages(c), ...extra });
}
