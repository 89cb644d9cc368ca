import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';

/** A total and the `module_stats` version it was counted at. */
interface KnownTotal {
  version: number;
  total: number;
}

const MAX_ENTRIES = 1000;

/**
 * Totals of filtered admin module lists (`query`, `code`, `year`), each remembered with the `module_stats`
 * version it was counted at. The list statement reads the current version in its own snapshot and counts the
 * matches only when the version differs from the remembered one, so a total served from here is exactly what
 * counting would give in that snapshot, on every replica: any write to `modules` bumps the version in the
 * same transaction, at its commit (triggers of migrations ModuleCounts and ModuleStatsAtCommit).
 */
@Injectable()
export class ModuleTotals {
  /** The least recently used filter goes first when it is full. */
  private readonly entries = new LRUCache<string, KnownTotal>({ max: MAX_ENTRIES });

  get(key: string): KnownTotal | undefined {
    return this.entries.get(key);
  }

  set(key: string, known: KnownTotal): void {
    this.entries.set(key, known);
  }
}

/** The cache key of a filter, or undefined when there is none to cache (member lists, the unfiltered list). */
export function totalsKey(filter: {
  memberId?: number;
  query?: string;
  code?: string;
  year?: number;
}): string | undefined {
  if (filter.memberId !== undefined) return undefined;
  if (!filter.query && !filter.code && filter.year === undefined) return undefined;
  return JSON.stringify([filter.query ?? '', filter.code ?? '', filter.year ?? null]);
}
