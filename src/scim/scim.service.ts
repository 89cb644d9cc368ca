import { Injectable } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { INT64_MAX } from '../core/ids.js';
import { type UserSummarySource } from '../users/user.mapper.js';
import { UsersRepository } from '../users/users.repository.js';
import {
  DuplicateEmail,
  DuplicateExternalId,
  DuplicateUsername,
  UserNotFound,
} from '../users/users.errors.js';
import { UsersService, type WriteOrigin } from '../users/users.service.js';
import { invalidValue, scimAdminForbidden, scimUserNotFound, uniqueness } from './scim.errors.js';
import { FILTER_MAX_RESULTS, listResponse } from './scim-discovery.js';
import { type FilterCondition, parseFilter } from './scim-filter.js';
import { applyPatch, readPatchBody } from './scim-patch.js';
import { fieldsOf, readUserBody, type ScimUserFields, toScimUser } from './scim-user.js';
import { ScimUsersRepository } from './scim-users.repository.js';

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

/** SCIM 2.0 Users (docs/api.md §14): the same writes, audit and change events as the user routes. */
@Injectable()
export class ScimService {
  constructor(
    private readonly users: UsersRepository,
    private readonly writer: UsersService,
    private readonly scimUsers: ScimUsersRepository,
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
    const created = await scimErrors(() =>
      this.writer.insert(
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
        origin(caller),
      ),
    );
    const location = this.location(caller.base, created);
    return { resource: toScimUser(created, location), location };
  }

  /** PUT: omitted optional attributes become null; an omitted `active` stays as it is. */
  async replace(idText: string, body: unknown, caller: ScimCaller): Promise<Record<string, unknown>> {
    const fields = readUserBody(body);
    return this.write(idText, (current) => ({ ...fields, active: fields.active ?? current.active }), caller);
  }

  /** PATCH: every operation or none; one that changes nothing writes nothing (no audit, no event). */
  async patch(idText: string, body: unknown, caller: ScimCaller): Promise<Record<string, unknown>> {
    const operations = readPatchBody(body);
    // The values are checked (400) before the user's existence (404), as every validation (docs/api.md §1).
    applyPatch(PLACEHOLDER, operations);
    return this.write(idText, (current) => applyPatch(current, operations), caller);
  }

  async remove(idText: string, caller: ScimCaller): Promise<void> {
    const id = userId(idText);
    if (id === null) throw scimUserNotFound();
    await scimErrors(() => this.writer.delete(id, refuseAdmin, origin(caller)));
  }

  /**
   * A PUT or PATCH, planned from the user as it stands (its row locked by the writer), so that a change another
   * request committed meanwhile is never undone; an admin → 403, after existence.
   */
  private async write(
    idText: string,
    plan: (current: ScimUserFields) => ScimUserFields,
    caller: ScimCaller,
  ): Promise<Record<string, unknown>> {
    const id = userId(idText);
    if (id === null) throw scimUserNotFound();
    const { user } = await scimErrors(() =>
      this.writer.change(
        id,
        (current) => {
          refuseAdmin(current);
          const after = plan(fieldsOf(current));
          return {
            username: after.userName,
            email: after.email,
            givenName: after.givenName,
            familyName: after.familyName,
            displayName: after.displayName,
            externalId: after.externalId,
            active: after.active,
          };
        },
        origin(caller),
        { unchangedIsNoWrite: true },
      ),
    );
    return toScimUser(user, this.location(caller.base, user));
  }

  private async existing(idText: string): Promise<UserSummarySource> {
    const id = userId(idText);
    const user = id === null ? null : await this.users.findById(id);
    if (!user) throw scimUserNotFound();
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

/** A provisioning token never writes an administrator (docs/security.md). */
function refuseAdmin(user: { admin: boolean }): void {
  if (user.admin) throw scimAdminForbidden();
}

/** SCIM's audit summary additions: `via` and the token. */
const origin = (caller: ScimCaller): WriteOrigin => ({
  context: caller.context,
  via: { via: 'scim', token_id: caller.tokenId },
});

/** The writer's 404 and 409s as SCIM errors. */
async function scimErrors<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof UserNotFound) throw scimUserNotFound();
    if (
      error instanceof DuplicateUsername ||
      error instanceof DuplicateEmail ||
      error instanceof DuplicateExternalId
    )
      throw uniqueness(error.message);
    throw error;
  }
}
