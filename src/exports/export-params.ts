import { type EffectiveStatus } from '../course-modules/modules/effective-status.js';
import { parseInt32, type Query, QueryReader } from '../core/query.js';
import { INCLUDABLE, type Profile, type UserKey } from './lms-files.js';

/** The query of an LMS export (docs/api.md §16), checked. */
export interface ExportParams {
  year: number;
  userKey: UserKey;
  /** `active` and the statuses of `include`, in the profile's order. */
  statuses: EffectiveStatus[];
  preview: boolean;
  maxDrop: number | undefined;
}

export const YEAR_MESSAGE = 'year must be an integer';
export const USER_KEY_MESSAGE = 'user_key must be one of id, external_id';
export const PREVIEW_MESSAGE = 'preview must be true or false';
export const MAX_DROP_MESSAGE = 'max_drop must be an integer between 0 and 100';
export const includeMessage = (profile: Profile) =>
  `include must be a comma-separated list of: ${INCLUDABLE[profile].join(',')}`;

/** `include`: a comma-separated subset of the profile's values, none repeated, none empty; absent: all. */
function readInclude(query: Query, reader: QueryReader, profile: Profile): EffectiveStatus[] | undefined {
  const allowed = INCLUDABLE[profile];
  if (query.include === undefined) return [...allowed];
  // A repeated parameter is a repeated value too.
  const raw = typeof query.include === 'string' ? reader.string('include') : undefined;
  if (raw === undefined) return reader.invalid(includeMessage(profile));
  const values = raw.split(',');
  const ok =
    values.every((value) => (allowed as readonly string[]).includes(value)) &&
    new Set(values).size === values.length;
  if (!ok) return reader.invalid(includeMessage(profile));
  return allowed.filter((status) => values.includes(status));
}

/** Every parameter's 400 together, in this order: year, user_key, include, preview, max_drop. */
export function readExportParams(query: Query, profile: Profile): ExportParams {
  const reader = new QueryReader(query);
  const year = query.year === undefined ? reader.invalid(YEAR_MESSAGE) : reader.int('year');
  const rawKey = reader.string('user_key');
  const userKey =
    rawKey === undefined || rawKey === 'id' || rawKey === 'external_id'
      ? (rawKey ?? 'id')
      : reader.invalid(USER_KEY_MESSAGE);
  const include = readInclude(query, reader, profile);
  const preview = reader.boolean('preview');
  const rawDrop = query.max_drop;
  let maxDrop: number | undefined;
  if (rawDrop !== undefined) {
    maxDrop = typeof rawDrop === 'string' ? parseInt32(rawDrop) : undefined;
    if (maxDrop === undefined || maxDrop < 0 || maxDrop > 100) maxDrop = reader.invalid(MAX_DROP_MESSAGE);
  }
  reader.done();
  return {
    year: year!,
    userKey: userKey!,
    statuses: ['active', ...include!],
    preview: preview ?? false,
    maxDrop,
  };
}
