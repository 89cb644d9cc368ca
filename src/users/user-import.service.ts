import { type StreamableFile } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { toUserSummary } from './user.mapper.js';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { PasswordHasher } from './password-hasher.js';
import { type CsvRow } from '../csv/csv-reader.js';
import { ImportHasErrors } from '../csv/csv.errors.js';
import { csvDownload } from '../csv/csv-writer.js';
import { parseSort, type Query, QueryReader } from '../core/query.js';
import {
  type PlannedUser,
  planUserImport,
  type UserImportColumn,
  type UserImportResult,
} from './user-import.js';
import { readUserFilters, USER_LIST_SORT_FIELDS } from './user-list-filter.js';
import { type NewUser, UsersRepository } from './users.repository.js';
import { violatedUniqueConstraint } from '../database/sql.js';
import { mapWithConcurrency } from './map-with-concurrency.js';

/** argon2id runs on libuv's pool (4 threads by default): an import never takes all of it. */
const HASH_CONCURRENCY = 2;

export const USER_EXPORT_COLUMNS = ['id', 'username', 'email', 'admin', 'created_at', 'updated_at'] as const;

/** `POST /api/users/import` and `GET /api/users/export.csv` (docs/api.md §9). */
@Injectable()
export class UserImportService {
  constructor(
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  private async plan(rows: readonly CsvRow<UserImportColumn>[], dryRun: boolean) {
    const stored = await this.users.storedIdentities(
      rows.map((row) => row.cells.username),
      rows.map((row) => row.cells.email),
    );
    const planned = planUserImport(rows, stored, dryRun);
    if (planned.result.errors > 0) throw new ImportHasErrors(planned.result);
    return planned;
  }

  /**
   * Checks every row, then (unless `dryRun`) creates the new users in one transaction with one audit event.
   * Any row error: 422 with the per-row result, nothing created.
   */
  async import(
    rows: readonly CsvRow<UserImportColumn>[],
    dryRun: boolean,
    context: RequestContext,
  ): Promise<UserImportResult> {
    const { result, toCreate } = await this.plan(rows, dryRun);
    if (dryRun || toCreate.length === 0) return result;

    const generated = new Map<PlannedUser, string>();
    const hashes = await mapWithConcurrency(toCreate, HASH_CONCURRENCY, async (user) => {
      if (user.password !== undefined) return this.hasher.hash(user.password);
      const { password, hash } = this.hasher.generate();
      generated.set(user, password);
      return hash;
    });
    const newUsers: NewUser[] = toCreate.map((user, index) => ({
      username: user.username,
      email: user.email,
      passwordHash: hashes[index],
      admin: user.admin,
    }));
    try {
      await this.transactions.runLong(async (manager) => {
        const created = await this.users.insertMany(newUsers, manager);
        const ids = new Map(created.map((row) => [row.username.toLowerCase(), Number(row.id)]));
        toCreate.forEach((user) => (user.row.id = ids.get(user.username.toLowerCase()) ?? null));
        await this.audit.record(manager, context, {
          action: 'user.import',
          targetType: 'user',
          targetIds: toCreate.map((user) => user.row.id!),
          summary: {
            users: toCreate.map((user) =>
              user.admin ? { username: user.username, admin: true } : { username: user.username },
            ),
          },
        });
        const byName = new Map(created.map((row) => [row.username.toLowerCase(), row]));
        await this.changeEvents.record(
          manager,
          toCreate.map((user) => ({
            type: 'user.created',
            data: toUserSummary(byName.get(user.username.toLowerCase())!),
          })),
        );
      });
    } catch (error) {
      if (violatedUniqueConstraint(error) === undefined) throw error;
      // Another request stored a clashing user meanwhile: answer with the rows as they are now.
      await this.plan(rows, dryRun);
      throw error;
    }
    // Returned once, here; never stored in clear or logged.
    for (const [user, password] of generated) user.row.password = password;
    return result;
  }

  /** Every user matching the list's filters and sort, as a streamed CSV file. */
  async export(query: Query): Promise<StreamableFile> {
    const reader = new QueryReader(query);
    const filters = readUserFilters(reader);
    reader.done();
    const sort = parseSort(query.sort, USER_LIST_SORT_FIELDS);
    const rows = await this.users.streamList({ ...filters, sort });
    return csvDownload(rows, USER_EXPORT_COLUMNS, 'users.csv');
  }
}
