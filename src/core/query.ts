import { ValidationFailed } from './errors.js';

export type Query = Record<string, unknown>;

/** The 400 message of a parameter that is not a 32-bit integer. */
export const integerMessage = (name: string) => `${name} must be an integer`;

/**
 * The 400 messages of `page` and `per_page`: every paged route reads them with {@link QueryReader.paging} and
 * documents them with these.
 */
export const PAGING_MESSAGES: readonly string[] = [integerMessage('page'), integerMessage('per_page')];

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** Collects the 400 messages of a query string so they are reported together, in parameter order. */
export class QueryReader {
  private readonly errors: string[] = [];

  constructor(private readonly query: Query) {}

  /** A text parameter; a repeated one, or one with U+0000 (which PostgreSQL text cannot hold), is an error. */
  string(name: string): string | undefined {
    const value = this.query[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return this.invalid(`${name} must be given at most once`);
    if (value.includes('\u0000')) return this.invalid(`${name} must not contain NUL characters`);
    return value;
  }

  /** Records a feature's own message for a parameter, in the order the parameters are read. */
  invalid(message: string): undefined {
    this.errors.push(message);
    return undefined;
  }

  /** Plain decimal digits with an optional leading `-`, within 32 bits; else `<name> must be an integer`. */
  int(name: string): number | undefined {
    const value = this.query[name];
    if (value === undefined) return undefined;
    const parsed = typeof value === 'string' ? parseInt32(value) : undefined;
    if (parsed === undefined) this.errors.push(integerMessage(name));
    return parsed;
  }

  /** `page` (default 1, at least 1) and `per_page` (default 20, 1..100), clamped. */
  paging(): Paging {
    const page = this.int('page');
    const perPage = this.int('per_page');
    return toPaging(page ?? 1, perPage ?? 20);
  }

  /** `true` / `false`; else `<name> must be true or false`. */
  boolean(name: string): boolean | undefined {
    const value = this.query[name];
    if (value === undefined) return undefined;
    if (value === 'true') return true;
    if (value === 'false') return false;
    this.errors.push(`${name} must be true or false`);
    return undefined;
  }

  /** Throws the collected messages, if any; call before {@link parseSort}, which is reported alone. */
  done(): void {
    if (this.errors.length > 0) throw new ValidationFailed(this.errors.join('; '));
  }
}

/** `page` and `per_page` of a route whose query string holds nothing else (400 with {@link PAGING_MESSAGES}). */
export function readPaging(query: Query): Paging {
  const reader = new QueryReader(query);
  const paging = reader.paging();
  reader.done();
  return paging;
}

export function parseInt32(value: string): number | undefined {
  if (!/^-?\d+$/.test(value)) return undefined;
  const parsed = Number(value);
  return parsed >= INT32_MIN && parsed <= INT32_MAX ? parsed : undefined;
}

export interface Paging {
  page: number;
  perPage: number;
  offset: number;
}

export function toPaging(page: number, perPage: number): Paging {
  const clampedPage = Math.max(page, 1);
  const clampedPerPage = Math.min(Math.max(perPage, 1), 100);
  return { page: clampedPage, perPage: clampedPerPage, offset: (clampedPage - 1) * clampedPerPage };
}

export interface SortKey {
  /** The SQL expression to order by, from the caller's whitelist. */
  column: string;
  descending: boolean;
}

export const INVALID_SORT_MESSAGE = 'Invalid field used for sorting';

/**
 * `code,-year`: comma-separated, trimmed, blanks skipped, a leading `-` for descending. `fields` maps each
 * allowed name to its SQL expression; anything else is 400 `Invalid field used for sorting`.
 */
export function parseSort(raw: unknown, fields: Readonly<Record<string, string>>): SortKey[] {
  if (raw === undefined) return [];
  if (typeof raw !== 'string') throw new ValidationFailed(INVALID_SORT_MESSAGE);
  const keys: SortKey[] = [];
  for (const entry of raw.split(',')) {
    const trimmed = entry.trim();
    if (trimmed === '') continue;
    const descending = trimmed.startsWith('-');
    const name = descending ? trimmed.slice(1) : trimmed;
    if (!Object.hasOwn(fields, name)) throw new ValidationFailed(INVALID_SORT_MESSAGE);
    // A field already sorted on cannot change the order again: a repeat is dropped, so the ORDER BY (and the
    // number of distinct statements a client can make) stays bounded by the number of fields.
    if (keys.some((key) => key.column === fields[name])) continue;
    keys.push({ column: fields[name], descending });
  }
  return keys;
}
