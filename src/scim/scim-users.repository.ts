import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { INT64_MAX } from '../core/ids.js';
import { pageWithTotal, type PageRow, SqlParams, splitPage, type Page } from '../database/sql.js';
import { type UserSummarySource } from '../users/user.mapper.js';
import { USER_SUMMARY_COLUMNS } from '../users/users.repository.js';
import { type FilterCondition } from './scim-filter.js';

/**
 * The reads of `users` that SCIM needs beyond the users repository: the filtered list.
 * Each filter term is served by an index: `lower(username)` and `lower(email)` (the unique expression indexes),
 * `external_id` (its unique index), `id` (the primary key).
 */
@Injectable()
export class ScimUsersRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The users matching every condition, by id; `offset` rows skipped, at most `limit` (0: the total only). */
  async page(
    conditions: readonly FilterCondition[],
    offset: number,
    limit: number,
  ): Promise<Page<UserSummarySource>> {
    const params = new SqlParams();
    const where: string[] = [];
    for (const { attribute, value } of conditions) {
      switch (attribute) {
        case 'userName':
          where.push(`lower(u.username) = lower(${params.add(value)})`);
          break;
        case 'email':
          where.push(`lower(u.email) = lower(${params.add(value)})`);
          break;
        case 'externalId':
          where.push(`u.external_id = ${params.add(value)}`);
          break;
        case 'id':
          // Ids are decimal strings; anything else (an IdP's GUID probe) matches nobody.
          if (/^\d{1,19}$/.test(value) && BigInt(value) <= INT64_MAX && BigInt(value) > 0n)
            where.push(`u.id = ${params.add(value)}`);
          else where.push('false');
          break;
      }
    }
    const sql = pageWithTotal(
      params,
      'FROM users u',
      where.length > 0 ? `WHERE ${where.join(' AND ')}` : '',
      USER_SUMMARY_COLUMNS,
      'u.id ASC',
      { page: 1, perPage: limit, offset },
    );
    return splitPage(await this.dataSource.query<PageRow<UserSummarySource>[]>(sql, params.values));
  }
}
