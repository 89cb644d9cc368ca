import { INT64_MAX } from '../core/ids.js';
import { type Query, QueryReader } from '../core/query.js';
import { INVALID_SORT_MESSAGE } from '../core/query.js';
import { ValidationFailed } from '../core/errors.js';
import {
  type AuditAction,
  type AuditTargetType,
  INVALID_AUDIT_ACTION_MESSAGE,
  isAuditAction,
} from './audit-actions.js';
import { type AuditFilter } from './audit.repository.js';

const TARGET_TYPES: readonly AuditTargetType[] = ['module', 'user', 'webhook', 'token'];
/** RFC 3339 date-time: a date, `T`, a time with optional fraction, and `Z` or an offset. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function positiveId(reader: QueryReader, name: string): string | undefined {
  const value = reader.string(name);
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value) && BigInt(value) >= 1n && BigInt(value) <= INT64_MAX)
    return BigInt(value).toString();
  return reader.invalid(`${name} must be a positive integer`);
}

function timestamp(reader: QueryReader, name: string): Date | undefined {
  const value = reader.string(name);
  if (value === undefined) return undefined;
  const parsed = RFC3339.test(value) ? new Date(value) : undefined;
  if (parsed === undefined || Number.isNaN(parsed.getTime())) {
    return reader.invalid(`${name} must be an RFC 3339 timestamp`);
  }
  return parsed;
}

/** `GET /api/audit`: page, per_page, actor_id, action, target_type, target_id, from, to, then sort over `at`. */
export function readAuditListParams(query: Query): AuditFilter {
  const reader = new QueryReader(query);
  const paging = reader.paging();
  const actorId = positiveId(reader, 'actor_id');
  const rawActions = reader.string('action');
  let actions: AuditAction[] | undefined;
  if (rawActions !== undefined) {
    const names = rawActions
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    if (names.length === 0 || !names.every(isAuditAction)) reader.invalid(INVALID_AUDIT_ACTION_MESSAGE);
    else actions = names;
  }
  const rawType = reader.string('target_type');
  const targetType = TARGET_TYPES.find((type) => type === rawType);
  if (rawType !== undefined && targetType === undefined)
    reader.invalid(`target_type must be one of ${TARGET_TYPES.join(', ')}`);
  const targetId = positiveId(reader, 'target_id');
  const from = timestamp(reader, 'from');
  const to = timestamp(reader, 'to');
  reader.done();
  return { actorId, actions, targetType, targetId, from, to, ascending: readSort(query.sort), paging };
}

/** `at` or `-at` (default), with the list rules for blanks; anything else is the usual sort 400. */
function readSort(raw: unknown): boolean {
  if (raw === undefined) return false;
  if (typeof raw !== 'string') throw new ValidationFailed(INVALID_SORT_MESSAGE);
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.some((entry) => entry !== 'at' && entry !== '-at'))
    throw new ValidationFailed(INVALID_SORT_MESSAGE);
  return entries.length > 0 ? entries[0] === 'at' : false;
}
