import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, type FindOptionsWhere, Repository } from 'typeorm';
import { returnedRow } from '../database/returning.js';
import { aliasedColumns } from '../database/sql.js';
import { User } from './user.entity.js';
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

/**
 * The `users` table one user at a time, for users/ and auth/: an account's reads, its writes (the users writer's,
 * docs/architecture.md), its single sign-on binding, its avatar. The list and search reads are
 * UserListRepository's, the set-based reads and writes UserBulkRepository's, SCIM's filtered reads
 * scim-users.repository.ts's.
 */
@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}
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
