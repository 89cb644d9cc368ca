import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A person who signs in. Usernames and emails are unique ignoring case: the migrations create unique
 * expression indexes on `lower(username)` and `lower(email)`, which the schema builder cannot express, so they
 * are declared by name with `synchronize: false` (the builder neither creates nor drops them). `external_id` is
 * unique as it is (case-sensitive: an identity provider's object id), several nulls allowed.
 */
@Entity({ name: 'users' })
@Index('uq_users_username_lower', { synchronize: false })
@Index('uq_users_email_lower', { synchronize: false })
@Index('uq_users_sso_identity', { synchronize: false })
@Index('uq_users_external_id', ['externalId'], { unique: true })
// A trigram index over the list's searched fields (USER_SEARCH_TEXT, user-list.repository.ts): an expression again.
@Index('ix_users_search_trgm', { synchronize: false })
export class User {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ type: 'varchar', length: 128 })
  username!: string;

  /** Stored lower-case. */
  @Column({ type: 'varchar', length: 320 })
  email!: string;

  @Column({ name: 'given_name', type: 'varchar', length: 100, nullable: true })
  givenName!: string | null;

  @Column({ name: 'family_name', type: 'varchar', length: 100, nullable: true })
  familyName!: string | null;

  @Column({ name: 'display_name', type: 'varchar', length: 200, nullable: true })
  displayName!: string | null;

  /** The identity provider's id for this person (SCIM `externalId`, e.g. Entra ID's object id). */
  @Column({ name: 'external_id', type: 'varchar', length: 255, nullable: true })
  externalId!: string | null;

  /** An inactive user keeps account and memberships but cannot sign in, and their tokens are refused. */
  @Column({ type: 'boolean', default: true })
  active!: boolean;

  /** Null for a user created by single sign-on: no password login. */
  @Column({ name: 'password_hash', type: 'text', nullable: true })
  passwordHash!: string | null;

  @Column({ type: 'boolean', default: false })
  admin!: boolean;

  /** Tokens issued in an earlier second than this are refused. */
  @Column({ name: 'password_changed_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  passwordChangedAt!: Date;

  /** Storage key of the current avatar, or null. */
  @Column({ name: 'avatar_key', type: 'text', nullable: true })
  avatarKey!: string | null;

  @Column({ name: 'avatar_content_type', type: 'varchar', length: 32, nullable: true })
  avatarContentType!: string | null;

  /** The identity provider's `iss` and `sub` this user is bound to (docs/sso.md, "Binding"), or null. */
  @Column({ name: 'sso_issuer', type: 'text', nullable: true })
  ssoIssuer!: string | null;

  @Column({ name: 'sso_subject', type: 'text', nullable: true })
  ssoSubject!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;
}
