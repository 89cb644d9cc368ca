import { Injectable, Logger } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { INT64_MAX } from '../core/ids.js';
import { Transactions } from '../database/transactions.js';
import { violatedUniqueConstraint } from '../database/sql.js';
import { ChangeEventsService } from '../events/change-events.service.js';
import { StorageService } from '../storage/storage.service.js';
import { avatarFolder } from '../users/avatar-files.js';
import { UserAccessCache } from '../users/user-access.cache.js';
import { toUserAccount, type UserSummarySource } from '../users/user.mapper.js';
import { type UserChanges, UsersRepository } from '../users/users.repository.js';
import { invalidValue, scimAdminForbidden, scimUserNotFound, uniqueness } from './scim.errors.js';
import { FILTER_MAX_RESULTS, listResponse } from './scim-discovery.js';
import { type FilterCondition, parseFilter } from './scim-filter.js';
import { applyPatch, readPatchBody } from './scim-patch.js';
import { fieldsOf, readUserBody, type ScimUserFields, toScimUser } from './scim-user.js';
import { type Clashes, ScimUsersRepository } from './scim-users.repository.js';

/** Who provisions: the request's audit context and the integration token it came with. */
export interface ScimCaller {
  context: RequestContext;
  tokenId: number;
  /** `…/api/scim/v2`, absolute: resources' `meta.location` and `Location` start with it. */
  base: string;
}

/** The query of `GET /Users`: each parameter as Fastify parsed it. */
export interface ScimListQuery {
  filter?: unknown;
  startIndex?: unknown;
  count?: unknown;
}

const COUNT_DEFAULT = 100;
const INT32 = /^-?\d+$/;

/** A query integer of §1 (decimal digits, an optional `-`, 32 bits), else 400 `invalidValue`. */
function queryInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !INT32.test(value) || Math.abs(Number(value)) > 2_147_483_647)
    throw invalidValue(`${name} must be an integer`);
  return Number(value);
}

/** `GET /Users` as read from its query: the 1-based index of the first result, the page size, the filter. */
export interface ScimListParams {
  startIndex: number;
  count: number;
  conditions: FilterCondition[];
}

/** Reads `startIndex`, `count` and `filter`, in that order; the first bad one is the 400. */
export function readScimListParams(query: ScimListQuery): ScimListParams {
  const startIndex = Math.max(1, queryInteger(query.startIndex, 'startIndex', 1));
  const count = Math.min(FILTER_MAX_RESULTS, Math.max(0, queryInteger(query.count, 'count', COUNT_DEFAULT)));
  // A repeated `filter` parameter arrives as an array: not a filter.
  const filter =
    query.filter === undefined ? undefined : typeof query.filter === 'string' ? query.filter : '';
  return { startIndex, count, conditions: filter === undefined ? [] : parseFilter(filter) };
}

/** The decimal id of a path, or null for anything that cannot be a user's id (an IdP's GUID probe): 404. */
function userId(text: string): string | null {
  if (!/^\d{1,19}$/.test(text)) return null;
  const id = BigInt(text);
  return id >= 1n && id <= INT64_MAX ? id.toString() : null;
}

/** The SCIM attribute names of the user fields a change audits, with their audit keys (as PUT /api/users). */
const AUDITED: readonly (readonly [string, keyof ScimUserFields])[] = [
  ['username', 'userName'],
  ['email', 'email'],
  ['given_name', 'givenName'],
  ['family_name', 'familyName'],
  ['display_name', 'displayName'],
  ['external_id', 'externalId'],
  ['active', 'active'],
];

/** SCIM 2.0 Users (docs/api.md §14): the same writes, audit and change events as the user routes. */
@Injectable()
export class ScimService {
  private readonly logger = new Logger(ScimService.name);

  constructor(
    private readonly users: UsersRepository,
    private readonly scimUsers: ScimUsersRepository,
    private readonly access: UserAccessCache,
    private readonly storage: StorageService,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  async list(
    { startIndex, count, conditions }: ScimListParams,
    base: string,
  ): Promise<Record<string, unknown>> {
    const { items, total } = await this.scimUsers.page(conditions, startIndex - 1, count);
    return listResponse(
      items.map((user) => toScimUser(user, this.location(base, user))),
      total,
      startIndex,
    );
  }

  async get(idText: string, base: string): Promise<Record<string, unknown>> {
    const user = await this.existing(idText);
    return toScimUser(user, this.location(base, user));
  }

  async create(
    body: unknown,
    caller: ScimCaller,
  ): Promise<{ resource: Record<string, unknown>; location: string }> {
    const fields = readUserBody(body);
    await this.checkUnique({ ...fields, active: fields.active ?? true }, null);
    let created: UserSummarySource;
    try {
      created = await this.transactions.run(async (transaction) => {
        const user = await this.users.insert(
          {
            username: fields.userName,
            email: fields.email,
            passwordHash: null,
            admin: false,
            givenName: fields.givenName,
            familyName: fields.familyName,
            displayName: fields.displayName,
            externalId: fields.externalId,
            active: fields.active ?? true,
          },
          transaction,
        );
        await this.audit.record(transaction, caller.context, {
          action: 'user.create',
          targetType: 'user',
          targetIds: [user.id],
          summary: { username: user.username, via: 'scim', token_id: caller.tokenId },
        });
        await this.changeEvents.record(transaction, [{ type: 'user.created', data: toUserAccount(user) }]);
        return user;
      });
    } catch (error) {
      throw clashError(error) ?? error;
    }
    const location = this.location(caller.base, created);
    return { resource: toScimUser(created, location), location };
  }

  /** PUT: omitted optional attributes become null; an omitted `active` stays as it is. */
  async replace(idText: string, body: unknown, caller: ScimCaller): Promise<Record<string, unknown>> {
    const fields = readUserBody(body);
    const before = await this.writable(idText);
    return this.write(before, { ...fields, active: fields.active ?? before.active }, caller);
  }

  /** PATCH: every operation or none; one that changes nothing writes nothing (no audit, no event). */
  async patch(idText: string, body: unknown, caller: ScimCaller): Promise<Record<string, unknown>> {
    const operations = readPatchBody(body);
    // The values are checked (400) before the user's existence (404), as every validation (docs/api.md §1).
    applyPatch(PLACEHOLDER, operations);
    const before = await this.writable(idText);
    return this.write(before, applyPatch(fieldsOf(before), operations), caller);
  }

  async remove(idText: string, caller: ScimCaller): Promise<void> {
    const user = await this.writable(idText);
    const id = String(user.id);
    await this.transactions.run(async (transaction) => {
      if (!(await this.users.delete(id, transaction))) throw scimUserNotFound();
      await this.audit.record(transaction, caller.context, {
        action: 'user.delete',
        targetType: 'user',
        targetIds: [id],
        summary: { username: user.username, via: 'scim', token_id: caller.tokenId },
      });
      await this.changeEvents.record(transaction, [
        { type: 'user.deleted', data: { id: Number(id), username: user.username } },
      ]);
    });
    this.access.invalidate(Number(id));
    await this.storage.remove(avatarFolder(id)).catch((error: unknown) => {
      this.logger.warn(`Could not remove the avatar of deleted user ${id}: ${String(error)}`);
    });
  }

  private async write(
    before: UserSummarySource,
    after: ScimUserFields,
    caller: ScimCaller,
  ): Promise<Record<string, unknown>> {
    const previous = fieldsOf(before);
    const summary: Record<string, unknown> = {};
    for (const [name, key] of AUDITED) {
      if (after[key] !== previous[key]) summary[name] = { from: previous[key], to: after[key] };
    }
    if (Object.keys(summary).length === 0) return toScimUser(before, this.location(caller.base, before));
    const id = String(before.id);
    // Only a changed identity can clash (a PATCH of a name or of `active` reads nothing more).
    if ('username' in summary || 'email' in summary || 'external_id' in summary)
      await this.checkUnique(after, id);
    const changes: UserChanges = {
      updatedAt: new Date(),
      username: after.userName,
      email: after.email,
      givenName: after.givenName,
      familyName: after.familyName,
      displayName: after.displayName,
      externalId: after.externalId,
      active: after.active,
    };
    let updated: UserSummarySource | null;
    try {
      updated = await this.transactions.run(async (transaction) => {
        const row = await this.users.update(id, changes, transaction);
        if (!row) return null;
        await this.audit.record(transaction, caller.context, {
          action: 'user.update',
          targetType: 'user',
          targetIds: [id],
          summary: { ...summary, via: 'scim', token_id: caller.tokenId },
        });
        await this.changeEvents.record(transaction, [{ type: 'user.updated', data: toUserAccount(row) }]);
        return row;
      });
    } catch (error) {
      throw clashError(error) ?? error;
    }
    if (!updated) throw scimUserNotFound();
    // A deactivation applies at once on this replica, within the 5 s user-check bound on the others.
    if (after.active !== previous.active) this.access.invalidate(Number(id));
    return toScimUser(updated, this.location(caller.base, updated));
  }

  /** 409 `uniqueness`, checked as userName, email, externalId. */
  private async checkUnique(fields: ScimUserFields, exceptId: string | null): Promise<void> {
    const clashes = await this.scimUsers.clashes(fields.userName, fields.email, fields.externalId, exceptId);
    const error = firstClash(clashes);
    if (error) throw error;
  }

  private async existing(idText: string): Promise<UserSummarySource> {
    const id = userId(idText);
    const user = id === null ? null : await this.users.findById(id);
    if (!user) throw scimUserNotFound();
    return user;
  }

  /** The user a SCIM write addresses: 404 if there is none, 403 for an admin (after existence, docs/api.md §14). */
  private async writable(idText: string): Promise<UserSummarySource> {
    const user = await this.existing(idText);
    if (user.admin) throw scimAdminForbidden();
    return user;
  }

  private location(base: string, user: { id: number | string }): string {
    return `${base}/Users/${String(user.id)}`;
  }
}

/** A user to check PATCH values against before the stored one is read. */
const PLACEHOLDER: ScimUserFields = {
  userName: 'placeholder',
  email: 'placeholder@example.invalid',
  givenName: null,
  familyName: null,
  displayName: null,
  externalId: null,
  active: true,
};

const USERNAME_TAKEN = 'A user with this username already exists';
const EMAIL_TAKEN = 'A user with this email already exists';
const EXTERNAL_ID_TAKEN = 'A user with this external ID already exists';

function firstClash(clashes: Clashes) {
  if (clashes.username) return uniqueness(USERNAME_TAKEN);
  if (clashes.email) return uniqueness(EMAIL_TAKEN);
  if (clashes.externalId) return uniqueness(EXTERNAL_ID_TAKEN);
  return undefined;
}

/** A unique violation from a write that raced another (the check above passed). */
function clashError(error: unknown) {
  const constraint = violatedUniqueConstraint(error);
  if (constraint === 'uq_users_username_lower') return uniqueness(USERNAME_TAKEN);
  if (constraint === 'uq_users_email_lower') return uniqueness(EMAIL_TAKEN);
  if (constraint === 'uq_users_external_id') return uniqueness(EXTERNAL_ID_TAKEN);
  return undefined;
}
