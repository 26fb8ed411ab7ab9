import { z } from 'zod';
import { LEAD_PAGE_CSP } from '../../domain/card-lead-pages';
import { LEAD_BODY_LIMIT_BYTES, LeadReceived } from './cards';
import { ErrorBody, ValidationErrorBody, validationError } from './common';

// What the share-link routes answer (api/routes/card-share-links.ts), declared once for the document and the handlers.

/** Headers of every public answer: nothing cached by the way (each load counts), no token in Referer. */
export const PUBLIC_HEADERS = { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', 'X-Content-Type-Options': 'nosniff' };
/** The lead form's own pages (thanks, refused fields, errors) with the page's policy. */
export const LEAD_PAGE_HEADERS = { ...PUBLIC_HEADERS, 'Content-Security-Policy': LEAD_PAGE_CSP };

// A request that prefers text/html (a browser navigating) gets these errors as a small HTML page instead
// of the JSON body (api/middleware/html-errors.ts): a person never sees raw JSON.
export const hiddenLink = {
  404: {
    description: 'Unknown, revoked or expired link (indistinguishable); a small HTML page when the request prefers text/html',
    schema: ErrorBody,
  },
} as const;
export const limited = {
  429: {
    description:
      'Too many requests from this address or for this link; retry after Retry-After seconds (an HTML page when the request prefers text/html)',
    schema: ErrorBody,
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } },
  },
} as const;
export const publicErrors = {
  400: { description: 'A parameter value outside its choices', schema: ErrorBody },
  ...hiddenLink,
  ...limited,
  ...validationError,
} as const;

/** The lead post's answers: JSON, or HTML pages for a browser's form post. */
export const LEAD_RESPONSES = {
  200: {
    description: 'Received (the same answer whether the email was known or not); a thank-you page for a form post that prefers text/html',
    schema: z.string(),
    contentType: 'text/html',
    json: LeadReceived,
  },
  400: {
    description: 'A parameter value outside its choices, or a body that is not valid UTF-8 (or nested deeper than JSON_MAX_DEPTH)',
    schema: ErrorBody,
  },
  404: {
    description: `${hiddenLink[404].description}; also for a form post that prefers text/html`,
    schema: z.string(),
    contentType: 'text/html',
    json: ErrorBody,
  },
  413: { description: `Body larger than ${LEAD_BODY_LIMIT_BYTES} bytes`, schema: ErrorBody },
  415: {
    description: 'A body other than JSON or a form (application/x-www-form-urlencoded), or in a charset other than UTF-8',
    schema: ErrorBody,
  },
  422: {
    description: 'Validation failed; for a form post that prefers text/html, a page naming the refused fields',
    schema: z.string(),
    contentType: 'text/html',
    json: ValidationErrorBody,
  },
  429: { ...limited[429], schema: z.string(), contentType: 'text/html', json: ErrorBody },
} as const;
