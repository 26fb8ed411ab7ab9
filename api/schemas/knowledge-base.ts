import { z } from 'zod';
import {
  CHUNKING_METHODS,
  CHUNK_SIZE_MAX,
  CHUNK_SIZE_MIN,
  EXACT_WEIGHT,
  RESULTS_COUNT_DEFAULT,
  RESULTS_COUNT_MAX,
  LEXICAL_EMBEDDER_VECTOR_WEIGHT,
  SOURCE_STATUSES,
  SOURCE_TYPES,
  VECTOR_WEIGHT,
} from '../../domain/knowledge-base';
import { trimmedText } from '../../domain/trimmed-text';
import { Timestamp, Uuid, offsetQuery } from './common';

const Name = trimmedText(200);
const Description = z.string().max(2000);
const SourceType = z.enum(SOURCE_TYPES);

const ChunkingInput = z
  .strictObject({
    method: z
      .enum(CHUNKING_METHODS)
      .nullable()
      .optional()
      .openapi({ description: 'fixed_size (windows with 15% overlap) or structure (headings, paragraphs, sentences); null: the default' }),
    chunk_size: z
      .number()
      .int()
      .min(CHUNK_SIZE_MIN)
      .max(CHUNK_SIZE_MAX)
      .nullable()
      .optional()
      .openapi({ description: 'Characters per chunk at most' }),
  })
  .openapi('KnowledgeChunkingStrategyInput');

export const Dataset = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    name: z.string(),
    description: z.string(),
    chunking_strategy: z.object({ method: z.enum(CHUNKING_METHODS), chunk_size: z.number().int() }),
    embedding_model: z.string().openapi({
      description:
        'The embedding model of the dataset, fixed at creation: queries are embedded with it. multilingual-e5-small-q4 (the local model npm start runs), the EMBEDDINGS_MODEL of an outside service, or builtin-hashing-384 (a lexical fallback, when no model runs)',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string(),
    modified_by: z.string(),
  })
  .openapi('KnowledgeDataset');
export const DatasetDetail = Dataset.extend({ source_ids: z.array(Uuid) }).openapi('KnowledgeDatasetDetail');
export const DatasetList = z.object({ data: z.array(Dataset), count: z.number().int() }).openapi('KnowledgeDatasetList');

export const CreateDatasetBody = z
  .strictObject({ name: Name, description: Description.optional(), chunking_strategy: ChunkingInput.optional() })
  .openapi('KnowledgeDatasetCreate');
export const PatchDatasetBody = z
  .strictObject({ name: Name, description: Description, chunking_strategy: ChunkingInput })
  .partial()
  .refine((b) => Object.keys(b).length > 0, 'at least one field')
  .openapi('KnowledgeDatasetPatch');

export const Source = z
  .object({
    id: Uuid,
    organization_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
    created_by: z.string(),
    modified_by: z.string(),
    type: SourceType,
    name: z.string(),
    description: z.string(),
    url: z.string().nullable(),
    domain: z.string().nullable(),
    file_id: Uuid.nullable(),
    file_upload_status: z.enum(SOURCE_STATUSES),
    failure_reason: z.string().nullable(),
    chunking_strategy: z.object({ method: z.enum(CHUNKING_METHODS).nullable(), chunk_size: z.number().int().nullable() }),
    file_processor: z.string().nullable().openapi({ description: 'What extracted the text: text, markdown, html, pdf, docx or csv' }),
    file_size: z.number().int().nullable(),
    chunk_count: z.number().int().openapi({ description: 'Chunks of the ingestion queries see' }),
    chunks_total: z.number().int().min(0).openapi({ description: 'Progress of the latest ingestion: chunks extracted' }),
    chunks_embedded: z
      .number()
      .int()
      .min(0)
      .openapi({ description: 'Progress of the latest ingestion: chunks embedded so far (equals chunks_total when done)' }),
    embedding_model: z
      .string()
      .nullable()
      .openapi({ description: 'The model that embedded the chunks queries see; null before the first ingestion' }),
    ingested_at: Timestamp.nullable(),
  })
  .openapi('KnowledgeSource');
export const SourceList = z.object({ data: z.array(Source), count: z.number().int() }).openapi('KnowledgeSourceList');

/** A host name DNS can carry: at most 253 characters, each label at most 63 (a longer one fails the lookup itself). */
const resolvableHost = (url: string) => {
  if (!URL.canParse(url)) return true; // not a URL: the URL check says so
  const host = new URL(url).hostname;
  return host.length <= 253 && host.split('.').every((label) => label.length <= 63);
};
const HttpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .refine(resolvableHost, 'must name a host of at most 253 characters, each label at most 63');
export const CreateSourceBody = z
  .discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('URL'),
      url: HttpUrl,
      name: Name.optional(),
      description: Description.optional(),
      chunking_strategy: ChunkingInput.optional(),
    }),
    z.strictObject({
      type: z.literal('FILE'),
      file_id: Uuid,
      name: Name.optional(),
      description: Description.optional(),
      chunking_strategy: ChunkingInput.optional(),
    }),
  ])
  .openapi('KnowledgeSourceCreate');

export const DatasetParams = z.object({ dataset_id: Uuid });
export const SourceParams = z.object({ source_id: Uuid });
export const DatasetSourceParams = z.object({ dataset_id: Uuid, source_id: Uuid });

export const Page = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: offsetQuery(1_000_000),
};
export const DatasetListQuery = z.object(Page);
export const PatternSearchQuery = z.object({
  name_pattern: z
    .string()
    .max(500)
    .optional()
    .openapi({ description: 'Name pattern, `%` the only wildcard, case-insensitive; omitted: every name' }),
  type: SourceType.optional().openapi({ description: 'FILE or URL; omitted: both' }),
  ...Page,
});

export const PatternBody = z
  .strictObject({
    pattern: z
      .string()
      .min(1)
      .max(500)
      .openapi({ description: 'Name pattern, `%` the only wildcard (`_` matches itself), case-insensitive' }),
    type: SourceType,
  })
  .openapi('KnowledgeSourcePattern');
export const PatternResult = z
  .object({
    matched_count: z.number().int(),
    attached_count: z.number().int(),
    attached_source_ids: z.array(Uuid),
    already_attached_source_ids: z.array(Uuid),
  })
  .openapi('KnowledgeSourcePatternResult');
export const AttachResult = z.object({ attached: z.boolean(), source: Source }).openapi('KnowledgeSourceAttach');

/** The query text and the bounds of results_count, the same for a dataset and an agent's datasets. */
export const QueryText = z.string().trim().min(1).max(2000);
export const ResultsCount = z.number().int().min(1).max(RESULTS_COUNT_MAX);
export const QueryBody = z
  .strictObject({
    query: QueryText,
    results_count: ResultsCount.default(RESULTS_COUNT_DEFAULT).openapi({
      description: `Default ${RESULTS_COUNT_DEFAULT}, at most ${RESULTS_COUNT_MAX}`,
    }),
  })
  .openapi('KnowledgeQuery');
export const QueryResults = z
  .object({
    results: z.array(
      z.object({
        content: z.string(),
        score: z
          .number()
          .min(0)
          .max(1)
          .openapi({
            description: `${VECTOR_WEIGHT} × vector similarity (min-max normalized over the candidates) + ${+(1 - VECTOR_WEIGHT).toFixed(2)} × the square of the full-text score (IDF-weighted share of the query words held); ${LEXICAL_EMBEDDER_VECTOR_WEIGHT} and ${+(1 - LEXICAL_EMBEDDER_VECTOR_WEIGHT).toFixed(2)} for a dataset of the lexical builtin-hashing-384; when the query names exact terms (identifiers, names, quoted phrases, matched regardless of case, accents and separators) that sum takes ${+(1 - EXACT_WEIGHT).toFixed(2)} and the rarity-weighted share of the terms the passage holds ${EXACT_WEIGHT}; 1 is the nearest vector match holding every word (and every exact term)`,
          }),
        source_id: Uuid,
        dataset_id: Uuid,
      }),
    ),
  })
  .openapi('KnowledgeQueryResults');
