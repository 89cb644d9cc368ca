import { type StreamableFile } from '@nestjs/common';
import { Injectable } from '@nestjs/common';
import { Transactions } from '../database/transactions.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { toUserAccount } from './user.mapper.js';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { PasswordHasher } from './password-hasher.js';
import { type CsvRow } from '../csv/csv-reader.js';
import { ImportHasErrors } from '../csv/csv.errors.js';
import { csvDownload } from '../csv/csv-writer.js';
import {
  type PlannedUpdate,
  type PlannedUser,
  planUserImport,
  type UserImportColumn,
  type UserImportResult,
} from './user-import.js';
import { type UserListFilter } from './user-list-filter.js';
import { UserBulkRepository } from './user-bulk.repository.js';
import { UserListRepository } from './user-list.repository.js';
import { type NewUser } from './users.repository.js';
import { UsersService } from './users.service.js';
import { violatedUniqueConstraint } from '../database/sql.js';
import { mapWithConcurrency } from './map-with-concurrency.js';
import { UserAccessCache } from './user-access.cache.js';

/** argon2id runs on libuv's pool (4 threads by default): an import never takes all of it. */
const HASH_CONCURRENCY = 2;

export const USER_EXPORT_COLUMNS = [
  'id',
  'username',
  'email',
  'admin',
  'created_at',
  'updated_at',
  'given_name',
  'family_name',
  'display_name',
  'external_id',
  'active',
] as const;

/** A PlannedUpdate's fields under their wire names, for the audit summary. */
const WIRE_NAMES = {
  givenName: 'given_name',
  familyName: 'family_name',
  displayName: 'display_name',
  externalId: 'external_id',
  active: 'active',
} as const;

/** `POST /api/users/import` and `GET /api/users/export.csv` (docs/api.md §9). */
@Injectable()
export class UserImportService {
  constructor(
    private readonly transactions: Transactions,
    private readonly users: UserBulkRepository,
    private readonly userList: UserListRepository,
    private readonly writer: UsersService,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
    private readonly access: UserAccessCache,
  ) {}

  private async plan(rows: readonly CsvRow<UserImportColumn>[], dryRun: boolean, callerId?: number) {
    const stored = await this.users.importMatches(
      rows.map((row) => row.cells.username),
      rows.map((row) => row.cells.email),
      rows.map((row) => row.cells.external_id).filter((value) => value !== ''),
    );
    const planned = planUserImport(rows, stored, dryRun, callerId);
    if (planned.result.errors > 0) throw new ImportHasErrors(planned.result);
    return planned;
  }

  /**
   * Checks every row, then (unless `dryRun`) creates the new users and updates the changed ones in one
   * transaction with one audit event. Any row error: 422 with the per-row result, nothing changed.
   */
  async import(
    rows: readonly CsvRow<UserImportColumn>[],
    dryRun: boolean,
    context: RequestContext,
  ): Promise<UserImportResult> {
    const callerId = context.actorId ?? undefined;
    const { result, toCreate, toUpdate } = await this.plan(rows, dryRun, callerId);
    if (dryRun || (toCreate.length === 0 && toUpdate.length === 0)) return result;

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
      givenName: user.givenName,
      familyName: user.familyName,
      displayName: user.displayName,
      externalId: user.externalId,
      active: user.active,
    }));
    try {
      await this.transactions.runLong(async (manager) => {
        const { created, updated } = await this.writer.importRows(newUsers, toUpdate, manager);
        const ids = new Map(created.map((row) => [row.username.toLowerCase(), Number(row.id)]));
        toCreate.forEach((user) => (user.row.id = ids.get(user.username.toLowerCase()) ?? null));
        await this.audit.record(manager, context, {
          action: 'user.import',
          targetType: 'user',
          targetIds: [...toCreate.map((user) => user.row.id!), ...toUpdate.map((user) => user.id)],
          summary: {
            users: toCreate.map((user) =>
              user.admin ? { username: user.username, admin: true } : { username: user.username },
            ),
            ...(toUpdate.length > 0 ? { updated: toUpdate.map(updateSummary) } : {}),
          },
        });
        const byName = new Map(created.map((row) => [row.username.toLowerCase(), row]));
        const byId = new Map(updated.map((row) => [Number(row.id), row]));
        await this.changeEvents.record(manager, [
          ...toCreate.map((user) => ({
            type: 'user.created' as const,
            data: toUserAccount(byName.get(user.username.toLowerCase())!),
          })),
          ...toUpdate.map((user) => ({
            type: 'user.updated' as const,
            data: toUserAccount(byId.get(user.id)!),
          })),
        ]);
      });
    } catch (error) {
      if (violatedUniqueConstraint(error) === undefined) throw error;
      // Another request stored a clashing user meanwhile: answer with the rows as they are now.
      await this.plan(rows, dryRun);
      throw error;
    }
    for (const user of toUpdate) if (user.changes.active !== undefined) this.access.invalidate(user.id);
    // Returned once, here; never stored in clear or logged.
    for (const [user, password] of generated) user.row.password = password;
    return result;
  }

  /** Every user matching the list's filters and sort, as a streamed CSV file. */
  async export(filter: Omit<UserListFilter, 'paging'>): Promise<StreamableFile> {
    const rows = await this.userList.streamList(filter);
    return csvDownload(rows, USER_EXPORT_COLUMNS, 'users.csv');
  }
}

/** An updated row in the audit summary: the username and each changed field as `{from, to}`. */
function updateSummary(user: PlannedUpdate): Record<string, unknown> {
  const summary: Record<string, unknown> = { username: user.username };
  for (const [property, to] of Object.entries(user.changes))
    summary[WIRE_NAMES[property as keyof typeof WIRE_NAMES]] = {
      from: user.before[property as keyof typeof WIRE_NAMES],
      to,
    };
  return summary;
}
