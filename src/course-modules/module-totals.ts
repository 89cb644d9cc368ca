import { Injectable } from '@nestjs/common';

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
 * same transaction (triggers of migration ModuleCounts).
 */
@Injectable()
export class ModuleTotals {
  private readonly entries = new Map<string, KnownTotal>();

  get(key: string): KnownTotal | undefined {
    return this.entries.get(key);
  }

  set(key: string, known: KnownTotal): void {
    // Insertion order is the eviction order: re-inserting keeps a busy filter at the young end.
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
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
