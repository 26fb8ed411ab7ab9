import { z } from 'zod';
import { trimmedText } from '../../domain/trimmed-text';
import { Uuid } from './common';

const TagName = trimmedText(100);
const Color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a hex color like #1a2b3c')
  .openapi({ description: 'Hex color #rrggbb', example: '#3366ff' });

export const Tag = z.object({ id: Uuid, org_id: Uuid, name: z.string(), color: z.string().nullable() }).openapi('Tag');

export const TagList = z.object({ tags: z.array(Tag), schema_version: z.literal(1) }).openapi('TagList');

export const CreateTagBody = z.strictObject({ name: TagName, color: Color.nullable().optional() }).openapi('TagCreate');

export const PatchTagBody = z.strictObject({ name: TagName, color: Color.nullable() }).partial().openapi('TagPatch');

export const TagParams = z.object({ tag_id: Uuid });
