import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy, ValidateIf } from 'class-validator';
import {
  DATES_ORDER_MESSAGE,
  INVALID_STATUS_MESSAGE,
  MEMBERSHIP_STATUSES,
  type MembershipStatus,
  timestampMessage,
} from '../membership-status.js';

/**
 * RFC 3339 date-time (`2026-09-01T08:00:00Z`, `2026-09-01T09:00:00.5+01:00`): the date and time must exist
 * (no 30 February, no hour 24); a space may stand for the `T`, as RFC 3339 allows.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The instant of an RFC 3339 timestamp, or undefined when `value` is not one. */
export function parseTimestamp(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const match = RFC3339.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const local = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(local);
  if (
    year < 1 ||
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return undefined;
  const offsetHours = match[10] === undefined ? 0 : Number(match[10]);
  const offsetMinutes = match[11] === undefined ? 0 : Number(match[11]);
  if (offsetHours > 23 || offsetMinutes > 59) return undefined;
  const sign = match[9] === '-' ? -1 : 1;
  const fraction = match[7] === undefined ? 0 : Math.round(Number(`0${match[7]}`) * 1000);
  return new Date(local + fraction - sign * (offsetHours * 60 + offsetMinutes) * 60_000);
}

/** A date of the body: absent (keep), null (open), or an RFC 3339 timestamp. */
export const dateField = (value: unknown): Date | null | undefined =>
  value === null ? null : value === undefined ? undefined : parseTimestamp(value);

function IsMembershipDate(field: 'starts_at' | 'ends_at') {
  return ValidateBy(
    {
      name: 'isMembershipDate',
      validator: {
        validate: (value) => value === null || parseTimestamp(value) !== undefined,
      },
    },
    { message: timestampMessage(field) },
  );
}

/** `ends_at` after `starts_at` when the body gives both (the stored values are checked by the service). */
function IsAfterStart() {
  return ValidateBy(
    {
      name: 'isAfterStart',
      validator: {
        validate: (value, args) => {
          const start = dateField((args?.object as { starts_at?: unknown }).starts_at);
          const end = dateField(value);
          return !(start instanceof Date && end instanceof Date) || end > start;
        },
      },
    },
    { message: DATES_ORDER_MESSAGE },
  );
}

function IsMembershipStatus(requiredMessage?: string) {
  return ValidateBy({
    name: 'isMembershipStatus',
    validator: {
      validate: (value) => MEMBERSHIP_STATUSES.includes(value as MembershipStatus),
      defaultMessage: (args) =>
        args?.value === undefined && requiredMessage ? requiredMessage : INVALID_STATUS_MESSAGE,
    },
  });
}

export const AT_LEAST_ONE_FIELD_MESSAGE = 'At least one field must be provided';

const statusProperty = ApiProperty({
  type: 'string',
  enum: MEMBERSHIP_STATUSES,
  required: false,
  description: 'The membership status (docs/api.md §15); omitted: a stored membership keeps its own.',
  example: 'active',
});
const dateProperty = (description: string, example: string) =>
  ApiProperty({
    type: 'string',
    format: 'date-time',
    nullable: true,
    required: false,
    description: `${description} RFC 3339; null: open. Omitted: a stored membership keeps its own.`,
    example,
  });

type Body = { status?: unknown; starts_at?: unknown; ends_at?: unknown };

/** The optional `status` of a body; with `required`, at least one of the three fields must be there. */
export const StatusField = (required = false) =>
  applyDecorators(
    statusProperty,
    ValidateIf((body: Body) =>
      required
        ? body.status !== undefined || (body.starts_at === undefined && body.ends_at === undefined)
        : body.status !== undefined,
    ),
    IsMembershipStatus(required ? AT_LEAST_ONE_FIELD_MESSAGE : undefined),
  );

export const StartsAtField = () =>
  applyDecorators(
    dateProperty('From when the membership grants rights.', '2026-09-01T08:00:00.000Z'),
    ValidateIf((body: Body) => body.starts_at !== undefined),
    IsMembershipDate('starts_at'),
  );

export const EndsAtField = () =>
  applyDecorators(
    dateProperty('When the membership ends (completed from then on).', '2027-06-30T17:00:00.000Z'),
    ValidateIf((body: Body) => body.ends_at !== undefined),
    IsMembershipDate('ends_at'),
    IsAfterStart(),
  );

/** The membership fields of a body, as declared (after the body's other fields) by each DTO. */
export interface MembershipFields {
  status?: MembershipStatus;
  starts_at?: string | null;
  ends_at?: string | null;
}

/** What a write sets on a membership: each field given, or undefined to keep the stored one. */
export interface MembershipChange {
  status?: MembershipStatus;
  startsAt?: Date | null;
  endsAt?: Date | null;
}

export const membershipChangeOf = (body: MembershipFields): MembershipChange => ({
  status: body.status,
  startsAt: dateField(body.starts_at),
  endsAt: dateField(body.ends_at),
});
