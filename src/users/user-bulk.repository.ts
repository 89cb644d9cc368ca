import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, Repository } from 'typeorm';
import { User } from './user.entity.js';
import { type StoredIdentity } from './user-import.js';
import { type UserSummarySource } from './user.mapper.js';
import { type NewUser, USER_SUMMARY_COLUMNS } from './users.repository.js';

/** §14's fields of a user, as stored. */
export type PeopleFields = Pick<User, 'givenName' | 'familyName' | 'displayName' | 'externalId' | 'active'>;

/** PostgreSQL text cannot hold U+0000: such a value names nobody (and would fail the whole statement). */
const storable = (values: readonly string[]) => values.filter((value) => !value.includes('\u0000'));

const lowerNames = (values: readonly string[]) => storable(values).map((value) => value.toLowerCase());

/**
 * The `users` table many users at a time, set-based: the CSV import's and the bulk create's reads and writes,
 * the locks the module writes take on their users, the avatar sweep's read, and the demo seed's writes (the
 * users writer's too, docs/architecture.md).
 */
@Injectable()
export class UserBulkRepository {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}
  private run(manager?: EntityManager): EntityManager {
    return manager ?? this.users.manager;
  }

  /** Inserts the batch in one statement (all or nothing); rows come back in no particular order. */
  insertMany(users: readonly NewUser[], manager?: EntityManager): Promise<UserSummarySource[]> {
    return this.run(manager).query<UserSummarySource[]>(
      `INSERT INTO users AS u (username, email, password_hash, admin, given_name, family_name, display_name,
                               external_id, active)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::boolean[], $5::text[], $6::text[], $7::text[],
                            $8::text[], $9::boolean[])
       RETURNING ${USER_SUMMARY_COLUMNS}`,
      [
        users.map((user) => user.username),
        users.map((user) => user.email),
        users.map((user) => user.passwordHash),
        users.map((user) => user.admin),
        users.map((user) => user.givenName ?? null),
        users.map((user) => user.familyName ?? null),
        users.map((user) => user.displayName ?? null),
        users.map((user) => user.externalId ?? null),
        users.map((user) => user.active ?? true),
      ],
    );
  }

  /** Every stored user whose username or email (case-insensitively) is among those given; lower-cased. */
  storedIdentities(usernames: readonly string[], emails: readonly string[]): Promise<StoredIdentity[]> {
    return this.users.query<StoredIdentity[]>(
      `SELECT id, lower(username) AS username, lower(email) AS email FROM users
       WHERE lower(username) = ANY($1::text[]) OR lower(email) = ANY($2::text[])`,
      [lowerNames(usernames), lowerNames(emails)],
    );
  }

  /**
   * Every stored user whose username or email (case-insensitively) or external_id (exactly) is among those
   * given, for the CSV import: username and email lower-cased, with §14's fields.
   */
  importMatches(
    usernames: readonly string[],
    emails: readonly string[],
    externalIds: readonly string[],
  ): Promise<StoredIdentity[]> {
    return this.users.query<StoredIdentity[]>(
      `SELECT id, lower(username) AS username, lower(email) AS email, given_name AS "givenName",
              family_name AS "familyName", display_name AS "displayName", external_id AS "externalId", active
       FROM users
       WHERE lower(username) = ANY($1::text[]) OR lower(email) = ANY($2::text[]) OR external_id = ANY($3::text[])`,
      [lowerNames(usernames), lowerNames(emails), storable(externalIds)],
    );
  }

  /**
   * Sets §14's fields of several users in one statement (the CSV import's updates): for each user, only the
   * fields its entry names. The updated users, in no particular order.
   */
  async updatePeopleFields(
    entries: readonly { id: number; changes: Partial<PeopleFields> }[],
    at: Date,
    manager: EntityManager,
  ): Promise<UserSummarySource[]> {
    const has = (field: keyof PeopleFields) => entries.map((entry) => field in entry.changes);
    const value = <K extends keyof PeopleFields>(field: K) =>
      entries.map((entry) => entry.changes[field] ?? null);
    // TypeORM answers an UPDATE as [rows, affected].
    const [rows] = await manager.query<[UserSummarySource[], number]>(
      `UPDATE users AS u SET
         given_name = CASE WHEN v.set_given THEN v.given_name ELSE u.given_name END,
         family_name = CASE WHEN v.set_family THEN v.family_name ELSE u.family_name END,
         display_name = CASE WHEN v.set_display THEN v.display_name ELSE u.display_name END,
         external_id = CASE WHEN v.set_external THEN v.external_id ELSE u.external_id END,
         active = CASE WHEN v.set_active THEN v.active ELSE u.active END,
         updated_at = $12
       FROM unnest($1::bigint[], $2::boolean[], $3::text[], $4::boolean[], $5::text[], $6::boolean[], $7::text[],
                   $8::boolean[], $9::text[], $10::boolean[], $11::boolean[])
         AS v(id, set_given, given_name, set_family, family_name, set_display, display_name, set_external,
              external_id, set_active, active)
       WHERE u.id = v.id
       RETURNING ${USER_SUMMARY_COLUMNS}`,
      [
        entries.map((entry) => entry.id),
        has('givenName'),
        value('givenName'),
        has('familyName'),
        value('familyName'),
        has('displayName'),
        value('displayName'),
        has('externalId'),
        value('externalId'),
        has('active'),
        value('active'),
        at,
      ],
    );
    return rows;
  }

  /** The current avatar key of each existing user among `ids` (decimal strings), by id. */
  async avatarKeys(ids: readonly string[]): Promise<Map<string, string | null>> {
    const rows = await this.users.query<{ id: string; avatar_key: string | null }[]>(
      `SELECT id::text AS id, avatar_key FROM users WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id, row.avatar_key]));
  }

  /**
   * The existing users among `ids` (decimal strings within `bigint`), locked against deletion until the
   * transaction ends; taken in id order so concurrent writers do not deadlock.
   */
  async lockExisting(ids: readonly string[], manager: EntityManager): Promise<Set<string>> {
    const rows = await manager.query<{ id: string }[]>(
      `SELECT u.id::text AS id FROM users u WHERE u.id = ANY($1::bigint[]) ORDER BY u.id FOR KEY SHARE`,
      [ids],
    );
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Stored users named by username or email (case-insensitively), keyed by each lower-cased; locked against
   * deletion until the transaction ends, in id order.
   */
  async lockByNames(
    values: readonly string[],
    manager: EntityManager,
  ): Promise<Map<string, { id: number; username: string }>> {
    const names = [...new Set(storable(values))];
    const rows = await manager.query<{ id: number; username: string; email: string }[]>(
      `SELECT u.id, u.username, u.email FROM users u
       WHERE lower(u.username) = ANY($1::text[]) OR lower(u.email) = ANY($1::text[]) ORDER BY u.id FOR KEY SHARE`,
      [names],
    );
    const found = new Map<string, { id: number; username: string }>();
    for (const row of rows) {
      const user = { id: Number(row.id), username: row.username };
      found.set(row.username.toLowerCase(), user);
      found.set(row.email.toLowerCase(), user);
    }
    return found;
  }

  /**
   * The demo seed's users, set-based (docs/architecture.md, "The users writer"): one row, not an administrator,
   * for each `(username, email)` row that `generator` (a SELECT over `params`) yields, all with `passwordHash`;
   * usernames and emails already taken are skipped. How many were added.
   */
  async insertGenerated(
    generator: string,
    params: readonly unknown[],
    passwordHash: string,
    manager: EntityManager,
  ): Promise<number> {
    const [{ n }] = await manager.query<{ n: number }[]>(
      `WITH added AS (
         INSERT INTO users (username, email, password_hash, admin)
         SELECT g.username, g.email, $${params.length + 1}, false FROM (${generator}) g (username, email)
         ON CONFLICT DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM added`,
      [...params, passwordHash],
    );
    return n;
  }

  /** The demo seed's avatars: points a user without one at `key`; whether it did (no audit, no event). */
  async setAvatarIfNone(id: string, key: string, contentType: string): Promise<boolean> {
    const [, count] = await this.users.manager.query<[unknown[], number]>(
      `UPDATE users SET avatar_key = $2, avatar_content_type = $3 WHERE id = $1 AND avatar_key IS NULL`,
      [id, key, contentType],
    );
    return count > 0;
  }
}
