import { diffJson, type JsonChange } from '../../core/json-diff';
import type { CompareInput, VersionSnapshot } from './llm';

/** Field-by-field changes from one version to the other: configuration first, then builder inputs. */
export function versionChanges(input: CompareInput): JsonChange[] {
  return [
    ...diffJson(input.from.config, input.to.config),
    ...diffJson(input.from.instruction_builder_inputs ?? {}, input.to.instruction_builder_inputs ?? {}, 'instruction_builder_inputs'),
  ];
}

/** `version 2 (draft)`. */
export const versionLabel = (v: VersionSnapshot) => `version ${v.version} (${v.published ? 'published' : 'draft'})`;
