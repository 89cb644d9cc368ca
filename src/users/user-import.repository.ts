import { type Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { streamRows } from '../database/query-stream.js';
import { type StoredIdentity } from './user-import.js';
import { type UserListFilter } from './user-list-filter.js';

export interface NewUserRow {
  username: string;
  email: string;
  passwordHash: string;
  admin: boolean;
}

/** The SQL of user imports and the user export. */
@Injectable()
export class UserImportRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Every stored user whose username or email (case-insensitively) is among those given; lower-cased. */
  findIdentities(usernames: readonly string[], emails: readonly string[]): Promise<StoredIdentity[]> {
    return this.dataSource.query<StoredIdentity[]>(
      `SELECT id, lower(username) AS username, lower(email) AS email FROM users
       WHERE lower(username) = ANY($1::text[]) OR lower(email) = ANY($2::text[])`,
      [usernames.map((name) => name.toLowerCase()), emails.map((email) => email.toLowerCase())],
    );
  }

  /** One statement for the whole batch; returns the new ids by lower-cased username. */
  async insertMany(manager: EntityManager, users: readonly NewUserRow[]): Promise<Map<string, number>> {
    const rows = await manager.query<{ id: number; username: string }[]>(
      `INSERT INTO users (username, email, password_hash, admin)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[])
       RETURNING id, lower(username) AS username`,
      [
        users.map((user) => user.username),
        users.map((user) => user.email),
        users.map((user) => user.passwordHash),
        users.map((user) => user.admin),
      ],
    );
    return new Map(rows.map((row) => [row.username, Number(row.id)]));
  }

  /** Every user matching the list's filters, in its order, streamed from a cursor. */
  streamUsers(filter: UserListFilter): Promise<Readable> {
    return streamRows(
      this.dataSource,
      `SELECT u.id, u.username, u.email, u.admin, u.created_at, u.updated_at
       FROM users u ${filter.where} ORDER BY ${filter.orderBy}`,
      filter.params,
    );
  }
}
