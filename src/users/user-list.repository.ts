import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { type Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { preparedQuery } from '../database/prepared.js';
import { exportBounds, streamRows } from '../database/query-stream.js';
import { containsPattern, orderByClause, SqlParams, whereClause } from '../database/sql.js';
import { type UserListFilter } from './user-list-filter.js';
import { USER_ACCOUNT_JSON } from './user-summary-json.js';

/**
 * Everything the list's text filters search, as one lower-cased text: the expression of the trigram index
 * `ix_users_search_trgm` (migration UserStats), written here exactly as there so the planner can use it. It only
 * narrows the rows; each field is then matched on its own, since a match across two fields' boundary is no match.
 */
export const USER_SEARCH_TEXT = `lower(u.username || ' ' || u.email || ' ' || coalesce(u.given_name, '') || ' ' ||
        coalesce(u.family_name, '') || ' ' || coalesce(u.display_name, '') || ' ' || coalesce(u.external_id, ''))`;

/**
 * The list's filter conditions over `users u`, their values added to `params`. A text filter is
 * `lower(col) LIKE lower(pattern)` (ILIKE's answers), narrowed first by the trigram index over every searched
 * field, so `username` and `email` use the same index as `query`.
 */
function listConditions(params: SqlParams, filter: Omit<UserListFilter, 'sort' | 'paging'>): string[] {
  const conditions: string[] = [];
  const text = (value: string, fields: string) => {
    const pattern = params.add(containsPattern(value));
    conditions.push(
      `${USER_SEARCH_TEXT} LIKE lower(${pattern})`,
      `(${fields.replaceAll('$p', `lower(${pattern})`)})`,
    );
  };
  if (filter.query !== undefined)
    text(
      filter.query,
      `lower(u.username) LIKE $p OR u.email LIKE $p OR lower(u.given_name) LIKE $p
        OR lower(u.family_name) LIKE $p OR lower(u.display_name) LIKE $p OR lower(u.external_id) LIKE $p`,
    );
  // Emails are stored lower-case.
  if (filter.username !== undefined) text(filter.username, `lower(u.username) LIKE $p`);
  if (filter.email !== undefined) text(filter.email, `u.email LIKE $p`);
  if (filter.admin !== undefined) conditions.push(`u.admin = ${params.add(filter.admin)}`);
  if (filter.active !== undefined) conditions.push(`u.active = ${params.add(filter.active)}`);
  return conditions;
}

/** A page of the list: its users' JSON texts (`toUserAccount`'s, comma-joined) and the number of all matches. */
export interface UserPageJson {
  itemsJson: string;
  total: number;
}

/** A filtered list's total and the `user_stats` version it was counted at. */
interface KnownTotal {
  version: number;
  total: number;
}

/** Filtered totals remembered at once, the least recently used going first. */
const MAX_KNOWN_TOTALS = 1000;

/** `GET /api/users` and its CSV export: the list's filtered, sorted, paged reads of `users`. */
@Injectable()
export class UserListRepository {
  /** Filtered lists' totals, each with the `user_stats` version it was counted at (see `page`). */
  private readonly knownTotals = new LRUCache<string, KnownTotal>({ max: MAX_KNOWN_TOTALS });

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}
  /**
   * One page of users as JSON text (the admin view, comma-joined in the page's order, built by PostgreSQL as the
   * module list's is) and the number of all matches, in one statement, beside `user_stats` (migration
   * UserStats): the unfiltered total is its `total`; a filtered one is counted only when its `version` differs
   * from the version this process last counted that filter at (the count is an uncorrelated subquery, evaluated
   * only when CASE needs it), as the module list does with `module_stats` (docs/performance.md, "National
   * scale"). A text pattern runs unnamed, so PostgreSQL plans each search for its own pattern (a generic plan
   * cannot tell a name held by a twelfth of the users from a rare one).
   */
  async page(filter: UserListFilter): Promise<UserPageJson> {
    const params = new SqlParams();
    const conditions = listConditions(params, filter);
    const where = whereClause(conditions);
    const key =
      conditions.length === 0
        ? undefined
        : JSON.stringify([filter.query, filter.username, filter.email, filter.admin, filter.active]);
    const known = key === undefined ? undefined : this.knownTotals.get(key);
    const total =
      key === undefined
        ? 's.total'
        : `CASE WHEN s.version = ${params.add(known?.version ?? -1)} THEN NULL
                ELSE (SELECT count(*) FROM users u ${where}) END`;
    // The aggregate reads the sorted, limited subquery in its order; PostgreSQL keeps of `u.*` only the columns
    // USER_ACCOUNT_JSON reads.
    const sql = `SELECT s.version, ${total} AS total, page.items
  FROM user_stats s
  CROSS JOIN LATERAL (
    SELECT coalesce(string_agg(${USER_ACCOUNT_JSON}, ','), '') AS items
    FROM (
      SELECT u.*
      FROM users u
      ${where}
      ORDER BY ${orderByClause(filter.sort, 'u.id')}
      LIMIT ${params.add(filter.paging.perPage)} OFFSET ${params.add(filter.paging.offset)}
    ) u
  ) page`;
    const textPattern = filter.query ?? filter.username ?? filter.email;
    const [row] = await preparedQuery<{
      version: number | string;
      total: number | string | null;
      items: string;
    }>(this.dataSource, sql, params.values, { name: textPattern === undefined && filter.sort.length <= 1 });
    const version = Number(row.version);
    let counted = row.total === null ? undefined : Number(row.total);
    if (counted === undefined) counted = known?.total ?? 0;
    else if (key !== undefined) this.knownTotals.set(key, { version, total: counted });
    return { itemsJson: row.items, total: counted };
  }

  /** Every user matching the list's filters, in its order (no paging), streamed from a cursor. */
  streamList(filter: Omit<UserListFilter, 'paging'>): Promise<Readable> {
    const params = new SqlParams();
    return streamRows(
      this.dataSource,
      `SELECT u.id, u.username, u.email, u.admin, u.created_at, u.updated_at, u.given_name, u.family_name,
              u.display_name, u.external_id, u.active
       FROM users u ${whereClause(listConditions(params, filter))} ORDER BY ${orderByClause(filter.sort, 'u.id')}`,
      params.values,
      exportBounds(this.config),
    );
  }
}
