import { type StreamableFile } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions.js';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { PasswordHasher } from './password-hasher.js';
import { type CsvRow } from '../core/csv/csv-reader.js';
import { ImportHasErrors } from '../core/csv/csv.errors.js';
import { csvDownload } from '../core/csv/csv-writer.js';
import { type Query } from '../core/query.js';
import {
  type PlannedUser,
  planUserImport,
  type UserImportColumn,
  type UserImportResult,
} from './user-import.js';
import { type NewUserRow, UserImportRepository } from './user-import.repository.js';
import { readUserListFilter } from './user-list-filter.js';
import { violatedUniqueConstraint } from '../database/sql.js';
import { mapWithConcurrency } from './user-row.js';

/** argon2id runs on libuv's pool (4 threads by default): an import never takes all of it. */
const HASH_CONCURRENCY = 2;

export const USER_EXPORT_COLUMNS = ['id', 'username', 'email', 'admin', 'created_at', 'updated_at'] as const;

/** `POST /api/users/import` and `GET /api/users/export.csv` (docs/api.md §9). */
@Injectable()
export class UserImportService {
  constructor(
    private readonly transactions: Transactions,
    private readonly users: UserImportRepository,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditService,
  ) {}

  private async plan(rows: readonly CsvRow<UserImportColumn>[], dryRun: boolean) {
    const stored = await this.users.findIdentities(
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
    const newRows: NewUserRow[] = toCreate.map((user, index) => ({
      username: user.username,
      email: user.email,
      passwordHash: hashes[index],
      admin: user.admin,
    }));
    try {
      await this.transactions.run(async (manager) => {
        const ids = await this.users.insertMany(manager, newRows);
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
    const filter = readUserListFilter(query);
    const rows = await this.users.streamUsers(filter);
    return csvDownload(rows, USER_EXPORT_COLUMNS, 'users.csv');
  }
}
