// What every registrar adapter answers (platform/adapters/registrars/registrar.ts picks one from the configuration).

export interface DomainQuote {
  domain: string;
  available: boolean;
  /** Price of one year, in the smallest unit of `currency`. */
  priceCents: number;
  currency: string;
}

export interface DomainPurchase {
  domain: string;
  orderId: string;
  priceCents: number;
  currency: string;
  registeredUntil: Date;
}

export interface Registrar {
  /** As responses and logs name it. */
  readonly name: string;
  check(domain: string): Promise<DomainQuote>;
  /** Buys the domain for `years`; throws RegistrarError when it is not available or costs more than `maxPriceCents`. */
  purchase(domain: string, options: { years: number; maxPriceCents?: number }): Promise<DomainPurchase>;
}

export class RegistrarError extends Error {
  constructor(
    message: string,
    readonly reason: 'unavailable' | 'price_changed' | 'unsupported' | 'failed',
  ) {
    super(message);
  }
}
