import { INT64_MAX } from '../../core/ids.js';
import { MODULE_NOT_FOUND_MESSAGE } from './module.errors.js';

const DUPLICATE_MODULE_ID_MESSAGE = 'Duplicate module ID';

interface BulkDeleteFailure {
  id: number;
  error: string;
}

export interface BulkDeleteResult {
  deleted: number;
  failed: BulkDeleteFailure[];
}

/**
 * The distinct ids worth looking up, as exact decimal strings: positive and within `bigint` (JSON numbers
 * beyond 2^53 arrive rounded; 2^63 itself names no module). Others can only be "not found".
 */
export function candidateIds(ids: readonly number[]): string[] {
  const candidates = new Set<string>();
  for (const id of ids) {
    const exact = BigInt(id);
    if (exact >= 1n && exact <= INT64_MAX) candidates.add(exact.toString());
  }
  return [...candidates];
}

/**
 * The result in request order: each id's first occurrence succeeded when it was deleted, else
 * `Module not found`; every later occurrence is `Duplicate module ID`.
 */
export function bulkDeleteResult(ids: readonly number[], deleted: ReadonlySet<string>): BulkDeleteResult {
  const seen = new Set<string>();
  const failed: BulkDeleteFailure[] = [];
  for (const id of ids) {
    const key = BigInt(id).toString();
    if (seen.has(key)) failed.push({ id, error: DUPLICATE_MODULE_ID_MESSAGE });
    else if (!deleted.has(key)) failed.push({ id, error: MODULE_NOT_FOUND_MESSAGE });
    seen.add(key);
  }
  return { deleted: deleted.size, failed };
}

export const bulkDeleteMessage = (result: BulkDeleteResult, requested: number) =>
  `Deleted ${result.deleted}/${requested} modules`;
