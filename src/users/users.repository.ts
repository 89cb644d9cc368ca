import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { type Readable } from 'node:stream';
import { type EntityManager, type FindOptionsWhere, Repository } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { preparedQuery } from '../database/prepared.js';
import { exportBounds, streamRows } from '../database/query-stream.js';
import { returnedRow } from '../database/returning.js';
import {
  aliasedColumns,
  containsPattern,
  orderByClause,
  type Page,
  type PageRow,
  SqlParams,
  whereClause,
} from '../database/sql.js';
import { User } from './user.entity.js';
import { type StoredIdentity } from './user-import.js';
import { type UserListFilter } from './user-list-filter.js';
import { type UserSummarySource } from './user.mapper.js';
import { type PerField } from '../core/wire-shape.js';

/** Each property of a `UserSummarySource` as the column of `users u` it is read from. */
const SUMMARY_SOURCE_COLUMNS = {
  id: 'u.id',
  username: 'u.username',
  email: 'u.email',
  givenName: 'u.given_name',
  familyName: 'u.family_name',
  displayName: 'u.display_name',
  externalId: 'u.external_id',
  active: 'u.active',
  admin: 'u.admin',
  avatarKey: 'u.avatar_key',
  createdAt: 'u.created_at',
  updatedAt: 'u.updated_at',
} as const satisfies PerField<UserSummarySource, string>;

/**
 * The columns of a User summary, aliased to the entity's property names (`SELECT ${USER_SUMMARY_COLUMNS} FROM
 * users u`), so a row is a `UserSummarySource` as it stands. Also the module personnel lists'.
 */
export const USER_SUMMARY_COLUMNS = aliasedColumns(SUMMARY_SOURCE_COLUMNS);

/** The same, as the properties a QueryBuilder's `returning()` names, in the same order. */
const SUMMARY_PROPERTIES = Object.keys(SUMMARY_SOURCE_COLUMNS) as (keyof UserSummarySource)[];

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

/** A filtered list's total and the `user_stats` version it was counted at. */
interface KnownTotal {
  version: number;
  total: number;
}

/** Filtered totals remembered at once, the least recently used going first. */
const MAX_KNOWN_TOTALS = 1000;

/** A new user's stored values (email already lower-cased, password already hashed; null: single sign-on only). */
export interface NewUser {
  username: string;
  email: string;
  passwordHash: string | null;
  admin: boolean;
  givenName?: string | null;
  familyName?: string | null;
  displayName?: string | null;
  externalId?: string | null;
  /** Default true. */
  active?: boolean;
  /** The IdP identity a user created by single sign-on is bound to (docs/sso.md, "Binding"). */
  ssoIssuer?: string;
  ssoSubject?: string;
}

/** Which of a user's unique identities another user holds already. */
export interface Clashes {
  username: boolean;
  email: boolean;
  externalId: boolean;
}

/**
 * A user as single sign-on matches it: its id, whether active and admin, and the IdP identity it is bound to
 * (both null: none).
 */
export interface SsoCandidate {
  id: number;
  active: boolean;
  admin: boolean;
  ssoIssuer: string | null;
  ssoSubject: string | null;
}

const SSO_CANDIDATE_COLUMNS = `id, active, admin, sso_issuer AS "ssoIssuer", sso_subject AS "ssoSubject"`;

/** §14's fields of a user, as stored. */
export type PeopleFields = Pick<User, 'givenName' | 'familyName' | 'displayName' | 'externalId' | 'active'>;

/** The columns an update may set; `updatedAt` is always set. */
export interface UserChanges {
  username?: string;
  email?: string;
  admin?: boolean;
  /** Null clears. */
  givenName?: string | null;
  familyName?: string | null;
  displayName?: string | null;
  externalId?: string | null;
  active?: boolean;
  passwordHash?: string;
  passwordChangedAt?: Date;
  updatedAt: Date;
}

/** What the per-request access check needs of a user. */
interface AccessRow {
  admin: boolean;
  /** Whole seconds since the epoch. */
  passwordChangedAt: number;
}

/** Arbitrary, fixed: serialises the first-admin check across instances starting together. */
const ADMIN_BOOTSTRAP_LOCK = 7_240_001;

/**
 * A path id arrives as an exact decimal string; the entity types `id` as a number (pg parses `bigint` to one),
 * and PostgreSQL compares the string with `bigint` exactly.
 */
const byId = (id: string | number): FindOptionsWhere<User> => ({ id: id as number });

/** PostgreSQL text cannot hold U+0000: such a value names nobody (and would fail the whole statement). */
const storable = (values: readonly string[]) => values.filter((value) => !value.includes('\u0000'));
const lowerNames = (values: readonly string[]) => storable(values).map((value) => value.toLowerCase());

/** The `users` table's reads and writes for users/ and auth/ (SCIM's filtered reads: scim-users.repository.ts). */
@Injectable()
export class UsersRepository {
  /** Filtered lists' totals, each with the `user_stats` version it was counted at (see `page`). */
  private readonly knownTotals = new LRUCache<string, KnownTotal>({ max: MAX_KNOWN_TOTALS });

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private run(manager?: EntityManager): EntityManager {
    return manager ?? this.users.manager;
  }

  /** A User summary from the row of a `returning(SUMMARY_PROPERTIES)`. */
  private summary(row: Record<string, unknown>): UserSummarySource {
    return returnedRow<User, (typeof SUMMARY_PROPERTIES)[number]>(
      this.users.metadata,
      SUMMARY_PROPERTIES,
      row,
    );
  }

  /**
   * One page of users and the number of all matches, in one statement, beside `user_stats` (migration
   * UserStats): the unfiltered total is its `total`; a filtered one is counted only when its `version` differs
   * from the version this process last counted that filter at (the count is an uncorrelated subquery, evaluated
   * only when CASE needs it), as the module list does with `module_stats` (docs/performance.md, "National
   * scale"). A text pattern runs unnamed, so PostgreSQL plans each search for its own pattern (a generic plan
   * cannot tell a name held by a twelfth of the users from a rare one).
   */
  async page(filter: UserListFilter): Promise<Page<UserSummarySource>> {
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
    const sql = `SELECT s.version, ${total} AS total, page.*
  FROM user_stats s
  LEFT JOIN LATERAL (
    SELECT ${USER_SUMMARY_COLUMNS}
    FROM users u
    ${where}
    ORDER BY ${orderByClause(filter.sort, 'u.id')}
    LIMIT ${params.add(filter.paging.perPage)} OFFSET ${params.add(filter.paging.offset)}
  ) page ON true`;
    const textPattern = filter.query ?? filter.username ?? filter.email;
    const rows = await preparedQuery<PageRow<UserSummarySource> & { version: number | string }>(
      this.users.manager.connection,
      sql,
      params.values,
      { name: textPattern === undefined && filter.sort.length <= 1 },
    );
    const version = Number(rows[0].version);
    let counted = rows[0].total === null ? undefined : Number(rows[0].total);
    if (counted === undefined) counted = known?.total ?? 0;
    else if (key !== undefined) this.knownTotals.set(key, { version, total: counted });
    return { items: rows.filter((row) => row.id !== null), total: counted };
  }

  /** Every user matching the list's filters, in its order (no paging), streamed from a cursor. */
  streamList(filter: Omit<UserListFilter, 'paging'>): Promise<Readable> {
    const params = new SqlParams();
    return streamRows(
      this.users.manager.connection,
      `SELECT u.id, u.username, u.email, u.admin, u.created_at, u.updated_at, u.given_name, u.family_name,
              u.display_name, u.external_id, u.active
       FROM users u ${whereClause(listConditions(params, filter))} ORDER BY ${orderByClause(filter.sort, 'u.id')}`,
      params.values,
      exportBounds(this.config),
    );
  }

  findById(id: string | number): Promise<User | null> {
    return this.users.findOneBy(byId(id));
  }

  /** Case-insensitive, as usernames are unique regardless of case. */
  findByUsername(username: string): Promise<User | null> {
    return this.users
      .createQueryBuilder('u')
      .where('lower(u.username) = lower(:username)', { username })
      .getOne();
  }

  /** The id of the user with this username (case-insensitively), or null. */
  async idByUsername(username: string): Promise<number | null> {
    if (username.includes('\u0000')) return null;
    const rows = await this.users.query<{ id: number }[]>(
      `SELECT id FROM users WHERE lower(username) = lower($1)`,
      [username],
    );
    return rows[0]?.id ?? null;
  }

  /**
   * The user with this username (case-insensitively) and its IdP binding, or null. The caller checks the
   * username rule first: `lower()` folds non-ASCII letters (U+0130, the Kelvin sign) onto ASCII ones.
   */
  async ssoCandidateByUsername(username: string): Promise<SsoCandidate | null> {
    const rows = await this.users.query<SsoCandidate[]>(
      `SELECT ${SSO_CANDIDATE_COLUMNS} FROM users WHERE lower(username) = lower($1)`,
      [username],
    );
    return rows[0] ?? null;
  }

  /** The user whose `external_id` is exactly this (OIDC_EXTERNAL_ID_CLAIM, docs/sso.md) and its binding, or null. */
  async ssoCandidateByExternalId(externalId: string): Promise<SsoCandidate | null> {
    if (externalId.includes('\u0000')) return null;
    const rows = await this.users.query<SsoCandidate[]>(
      `SELECT ${SSO_CANDIDATE_COLUMNS} FROM users WHERE external_id = $1`,
      [externalId],
    );
    return rows[0] ?? null;
  }

  /** The id of the user bound to this IdP identity, or null. */
  async idBySsoIdentity(issuer: string, subject: string): Promise<number | null> {
    if (issuer.includes('\u0000') || subject.includes('\u0000')) return null;
    const rows = await this.users.query<{ id: number }[]>(
      `SELECT id FROM users WHERE sso_issuer = $1 AND sso_subject = $2`,
      [issuer, subject],
    );
    return rows[0]?.id ?? null;
  }

  /**
   * Binds the user to the IdP identity at first sight, unless it is bound already, inactive (a refused token never
   * binds) or an admin (bound only on purpose); whether it was bound now. An identity bound to another user
   * meanwhile fails on the unique index (23505).
   */
  async bindSsoIdentity(id: number, issuer: string, subject: string): Promise<boolean> {
    // An UPDATE's query() answers [rows, affected].
    const [, affected] = await this.users.query<[unknown[], number]>(
      `UPDATE users SET sso_issuer = $2, sso_subject = $3
       WHERE id = $1 AND sso_subject IS NULL AND active AND NOT admin`,
      [id, issuer, subject],
    );
    return affected > 0;
  }

  /** Clears the user's IdP binding: the updated user, or null when there is none with this id. */
  async clearSsoBinding(
    id: string,
    updatedAt: Date,
    manager?: EntityManager,
  ): Promise<UserSummarySource | null> {
    const [rows] = await this.run(manager).query<[UserSummarySource[], number]>(
      `UPDATE users u SET sso_issuer = NULL, sso_subject = NULL, updated_at = $2 WHERE u.id = $1
       RETURNING ${USER_SUMMARY_COLUMNS}`,
      [id, updatedAt],
    );
    return rows[0] ?? null;
  }

  /**
   * Binds the user to the IdP identity, replacing any binding it had: the updated user and the binding before,
   * or null when there is no user with this id. An identity bound to another user fails on
   * `uq_users_sso_identity`.
   */
  async setSsoBinding(
    id: string,
    issuer: string,
    subject: string,
    updatedAt: Date,
    manager?: EntityManager,
  ): Promise<{ user: UserSummarySource; before: { issuer: string; subject: string } | null } | null> {
    const [rows] = await this.run(manager).query<
      [(UserSummarySource & { beforeIssuer: string | null; beforeSubject: string | null })[], number]
    >(
      `UPDATE users u SET sso_issuer = $2, sso_subject = $3, updated_at = $4
       FROM (SELECT id, sso_issuer, sso_subject FROM users WHERE id = $1 FOR UPDATE) b
       WHERE u.id = b.id
       RETURNING ${USER_SUMMARY_COLUMNS}, b.sso_issuer AS "beforeIssuer", b.sso_subject AS "beforeSubject"`,
      [id, issuer, subject, updatedAt],
    );
    const row = rows[0];
    if (!row) return null;
    const { beforeIssuer, beforeSubject, ...user } = row;
    const before =
      beforeIssuer === null || beforeSubject === null
        ? null
        : { issuer: beforeIssuer, subject: beforeSubject };
    return { user, before };
  }

  /**
   * Inserts the user unless its username or email is taken (case-insensitively; a concurrent insert of the same
   * user included): the new user, or null when nothing was inserted.
   */
  async insertUnlessTaken(user: NewUser, manager?: EntityManager): Promise<UserSummarySource | null> {
    const result = await this.run(manager)
      .createQueryBuilder()
      .insert()
      .into(User)
      .values(user)
      .orIgnore()
      .returning([...SUMMARY_PROPERTIES])
      .updateEntity(false)
      .execute();
    const [row] = result.raw as Record<string, unknown>[];
    return row === undefined ? null : this.summary(row);
  }

  exists(id: string | number): Promise<boolean> {
    return this.users.existsBy(byId(id));
  }

  /** Whether any user is stored at all. */
  any(): Promise<boolean> {
    return this.users.exists();
  }

  /** Inserts one user and returns it; a unique violation names `uq_users_username_lower` or `…_email_lower`. */
  async insert(user: NewUser, manager?: EntityManager): Promise<UserSummarySource> {
    const result = await this.run(manager)
      .createQueryBuilder()
      .insert()
      .into(User)
      .values(user)
      .returning([...SUMMARY_PROPERTIES])
      .updateEntity(false)
      .execute();
    return this.summary((result.raw as Record<string, unknown>[])[0]);
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

  /** Sets the given columns; the updated user, or null when there is none with this id. */
  async update(id: string, changes: UserChanges, manager?: EntityManager): Promise<UserSummarySource | null> {
    const values = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    const result = await this.run(manager)
      .createQueryBuilder()
      .update(User)
      .set(values)
      .where(byId(id))
      .returning([...SUMMARY_PROPERTIES])
      .updateEntity(false)
      .execute();
    const [row] = result.raw as Record<string, unknown>[];
    return row === undefined ? null : this.summary(row);
  }

  /** The user, its row locked until the transaction ends (a writer reads what it changes this way), or null. */
  async lockForUpdate(id: string, manager: EntityManager): Promise<UserSummarySource | null> {
    const rows = await manager.query<UserSummarySource[]>(
      `SELECT ${USER_SUMMARY_COLUMNS} FROM users u WHERE u.id = $1 FOR UPDATE`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Whether users other than `exceptId` hold this username or email (case-insensitively) or external id. */
  async clashes(
    identity: { username: string; email: string; externalId?: string | null },
    exceptId: string | null,
    manager?: EntityManager,
  ): Promise<Clashes> {
    const [row] = await this.run(manager).query<Clashes[]>(
      `SELECT
         EXISTS (SELECT 1 FROM users WHERE lower(username) = lower($1) AND id IS DISTINCT FROM $4::bigint) AS username,
         EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($2) AND id IS DISTINCT FROM $4::bigint) AS email,
         EXISTS (SELECT 1 FROM users WHERE external_id = $3 AND id IS DISTINCT FROM $4::bigint) AS "externalId"`,
      [identity.username, identity.email, identity.externalId ?? null, exceptId],
    );
    return row;
  }

  /** Deletes the user (role assignments go with it, by foreign key); whether there was one. */
  async delete(id: string, manager?: EntityManager): Promise<boolean> {
    const result = await this.run(manager).delete(User, byId(id));
    return (result.affected ?? 0) > 0;
  }

  /**
   * Points the user at a new avatar, locking the row to read the previous key in the same statement. The
   * updated user with `previous`, or null when there is none with this id.
   */
  async replaceAvatar(
    id: string,
    key: string,
    contentType: string,
    at: Date,
    manager?: EntityManager,
  ): Promise<(UserSummarySource & { previous: string | null }) | null> {
    const [rows] = await this.run(manager).query<
      [(UserSummarySource & { previous: string | null })[], number]
    >(
      `UPDATE users u SET avatar_key = $2, avatar_content_type = $3, updated_at = $4
       FROM (SELECT id, avatar_key FROM users WHERE id = $1 FOR UPDATE) previous
       WHERE u.id = previous.id
       RETURNING ${USER_SUMMARY_COLUMNS}, previous.avatar_key AS previous`,
      [id, key, contentType, at],
    );
    return rows[0] ?? null;
  }

  /** The user's avatar key and content type, or null when there is no such user. */
  avatarOf(id: string): Promise<Pick<User, 'id' | 'avatarKey' | 'avatarContentType'> | null> {
    // With the id selected, a user without an avatar is not mistaken for no user (all-null rows map to none).
    return this.users.findOne({
      select: { id: true, avatarKey: true, avatarContentType: true },
      where: byId(id),
    });
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
   * The admin flag and password-change second of a user, for the per-request token check; null for no user or
   * an inactive one (whose every token is refused, docs/api.md §14).
   */
  async accessRow(id: number): Promise<AccessRow | null> {
    const rows = await this.users.query<{ admin: boolean; changed: number }[]>(
      `SELECT admin, floor(extract(epoch FROM password_changed_at))::bigint AS changed FROM users
       WHERE id = $1 AND active`,
      [id],
    );
    return rows[0] ? { admin: rows[0].admin, passwordChangedAt: Number(rows[0].changed) } : null;
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

  /**
   * Creates the first administrator unless a user exists, under an advisory lock so that instances starting
   * together create one. Whether it was created.
   */
  insertFirstAdmin(admin: Omit<NewUser, 'admin'>): Promise<boolean> {
    return this.users.manager.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock($1)`, [ADMIN_BOOTSTRAP_LOCK]);
      const created = await manager.query<unknown[]>(
        `INSERT INTO users (username, email, password_hash, admin)
         SELECT $1, $2, $3, true WHERE NOT EXISTS (SELECT 1 FROM users) RETURNING id`,
        [admin.username, admin.email, admin.passwordHash],
      );
      return created.length > 0;
    });
  }
}
