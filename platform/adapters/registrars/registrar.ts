import { createHash } from 'node:crypto';
import { createPorkbunRegistrar } from './porkbun';
import { RegistrarError, type DomainPurchase, type DomainQuote, type Registrar } from './types';

// Registrars sell domains. The `simulated` built-in answers availability and a price from the name
// alone (deterministic, so a quote and the purchase after it agree) and registers nothing outside.

export { RegistrarError, type DomainPurchase, type DomainQuote, type Registrar };

/** Top-level domains the simulated registrar sells, with their yearly price. */
const SIMULATED_PRICES: Record<string, number> = { com: 1299, net: 1499, org: 1199, io: 3999, co: 2599, ai: 7999 };

export function createSimulatedRegistrar(): Registrar {
  const quote = (domain: string): DomainQuote => {
    const tld = domain.slice(domain.lastIndexOf('.') + 1);
    const price = SIMULATED_PRICES[tld];
    // Names starting with "taken" are registered already, so a caller can see the unavailable path.
    const available = price !== undefined && !domain.startsWith('taken');
    return { domain, available, priceCents: price ?? 0, currency: 'USD' };
  };
  return {
    name: 'simulated',
    check: async (domain) => quote(domain),
    purchase: async (domain, options) => {
      const q = quote(domain);
      if (!q.available) throw new RegistrarError(`${domain} is not available`, 'unavailable');
      const total = q.priceCents * options.years;
      if (options.maxPriceCents !== undefined && total > options.maxPriceCents) {
        throw new RegistrarError(`${domain} costs ${total} cents for ${options.years} year(s), above max_price_cents`, 'price_changed');
      }
      const until = new Date();
      until.setUTCFullYear(until.getUTCFullYear() + options.years);
      const orderId = `sim_${createHash('sha256').update(`${domain}:${Date.now()}`).digest('hex').slice(0, 16)}`;
      return { domain, orderId, priceCents: total, currency: q.currency, registeredUntil: until };
    },
  };
}

export function createRegistrar(config: {
  OUTREACH_REGISTRAR: 'simulated' | 'porkbun';
  OUTREACH_REGISTRAR_BASE_URL?: string;
  OUTREACH_REGISTRAR_API_KEY?: string;
  OUTREACH_REGISTRAR_SECRET_KEY?: string;
}): Registrar {
  switch (config.OUTREACH_REGISTRAR) {
    case 'simulated':
      return createSimulatedRegistrar();
    case 'porkbun':
      return createPorkbunRegistrar({
        baseUrl: config.OUTREACH_REGISTRAR_BASE_URL ?? 'https://api.porkbun.com/api/json/v3',
        apiKey: config.OUTREACH_REGISTRAR_API_KEY!,
        secretKey: config.OUTREACH_REGISTRAR_SECRET_KEY!,
      });
  }
}
