import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

/** Tags in the order the spec lists the areas; every route carries one of them. */
export const TAGS = [
  { name: 'Identity', description: 'API keys, user tokens, token exchange and the caller' },
  { name: 'CRM', description: 'Accounts, contacts, deals, activities, tags and files' },
  { name: 'Notifications', description: 'Event emission, the subscribable event catalog, the in-app feed and preferences' },
  { name: 'Agents', description: 'Conversational agents, versions, publishing, SIP and scaffolding' },
  { name: 'Campaigns', description: 'Outbound campaigns and per-organization concurrency' },
  { name: 'Knowledge Bases', description: 'Datasets of sources with semantic retrieval' },
  { name: 'Workflow Credentials', description: 'Credentials refreshed for workflows' },
  { name: 'Custom Data', description: 'Custom data tables' },
  { name: 'Meetings', description: 'Meeting capture webhook' },
  { name: 'Outreach', description: 'Outreach unibox' },
  { name: 'Card', description: 'Digital business cards and their email signature' },
  { name: 'Card Events', description: 'Conversion attribution of cards: events and summaries' },
  { name: 'Card Share Links', description: 'Share links of cards, and the unauthenticated endpoints reached through a link or QR code' },
  { name: 'Public Media', description: 'Card images: authenticated upload, unauthenticated reads by allowlisted key' },
  { name: 'Customer Intelligence', description: 'ICP profiles, company research runs and ICP-fit scoring runs' },
  { name: 'Account Readiness', description: 'Readiness profiles of accounts (fit, engagement, timing) computed by a workflow' },
  { name: 'Service Health', description: 'Liveness and readiness' },
] as const;
export type Tag = (typeof TAGS)[number]['name'];

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A session JWT, an ak_ organization key or a pat_ user token',
  });
  return registry;
}

/** The document; a tag is listed only once a registered route carries it (an area not built yet shows nothing). */
export function generateDocument(registry: OpenAPIRegistry) {
  const used = new Set(registry.definitions.flatMap((d) => (d.type === 'route' ? (d.route.tags ?? []) : [])));
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'Customer Relationship, Outreach and Voice-Agent Service API', version: '0.0.1' },
    tags: TAGS.filter((t) => used.has(t.name)).map((t) => ({ ...t })),
  });
}
