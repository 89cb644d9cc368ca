import { SetMetadata } from '@nestjs/common';

export const PAGED_LIST = 'pagedList';

/** Marks a paged list: its answer gets an RFC 8288 `Link` header (docs/api.md §17). */
export const PagedList = () => SetMetadata(PAGED_LIST, true);

/** What a paged answer reports of its page: the values in effect and the number of matches. */
export interface PageCounts {
  page: number;
  per_page: number;
  total: number;
}

/** The counts of a paged handler result (`{…, page, per_page, total}`), if it has them. */
export function pageCountsOf(result: unknown): PageCounts | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const { page, per_page: perPage, total } = result as Partial<Record<keyof PageCounts, unknown>>;
  if (typeof page !== 'number' || typeof perPage !== 'number' || typeof total !== 'number') return undefined;
  return { page, per_page: perPage, total };
}

/**
 * The `Link` header of a page: first, prev (not on page 1), next (not on the last page) and last, each the
 * request's URL (`base` + `url`) with every other query parameter as given and the effective page and per_page.
 */
export function pageLinks(base: string, url: string, counts: PageCounts): string {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const kept =
    at === -1
      ? []
      : url
          .slice(at + 1)
          .split('&')
          .filter((part) => !isPaging(part));
  const href = (page: number) =>
    `<${base}${path}?${[...kept, `page=${page}`, `per_page=${counts.per_page}`].join('&')}>`;
  const last = Math.max(1, Math.ceil(counts.total / counts.per_page));
  const links = [`${href(1)}; rel="first"`];
  if (counts.page > 1) links.push(`${href(counts.page - 1)}; rel="prev"`);
  if (counts.page < last) links.push(`${href(counts.page + 1)}; rel="next"`);
  links.push(`${href(last)}; rel="last"`);
  return links.join(', ');
}

/** A `page` or `per_page` parameter (its name as the query parser decodes it), or an empty one. */
function isPaging(part: string): boolean {
  if (part === '') return true;
  const equals = part.indexOf('=');
  const name = equals === -1 ? part : part.slice(0, equals);
  let decoded: string;
  try {
    decoded = decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    return false;
  }
  return decoded === 'page' || decoded === 'per_page';
}
