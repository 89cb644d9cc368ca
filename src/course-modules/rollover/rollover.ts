import { AppError } from '../../core/errors.js';
import { ModuleRole } from '../modules/module-role.js';

/** The most modules one rollover handles (docs/api.md §13). */
export const ROLLOVER_MAX = 10_000;
export const TOO_MANY_MODULES_MESSAGE = `At most ${ROLLOVER_MAX} modules per rollover`;
export const SAME_YEAR_MESSAGE = 'to_year must differ from from_year';

/** The roles copied when the body names none: the teaching staff, not the students. */
export const DEFAULT_ROLLOVER_ROLES: readonly ModuleRole[] = [
  ModuleRole.Lecturer,
  ModuleRole.AssistantLecturer,
  ModuleRole.Tutor,
];

export class TooManyModules extends AppError {
  constructor() {
    super(413, TOO_MANY_MODULES_MESSAGE);
  }
}

type RolloverAction = 'create' | 'exists' | 'missing';

interface RolloverRow {
  code: string;
  from_id: number | null;
  /** Null on a dry-run create and on a missing code. */
  to_id: number | null;
  action: RolloverAction;
  members_copied: number;
}

export interface RolloverResult {
  modules: RolloverRow[];
  created: number;
  existing: number;
  missing: number;
  members_copied: number;
  dry_run: boolean;
}

/** A module of the source year, with its namesake in the target year when there is one (decimal ids). */
export interface RolloverSource {
  id: string;
  code: string;
  toId: string | null;
}

/**
 * The answer, one row per source module and per code named with no source module, ordered by code.
 * `created` holds the target ids of modules created by this run (none on a dry run), `toIds` every known
 * target by code, `copied` the members copied (or, on a dry run, to be copied) by source id.
 */
export function rolloverResult(input: {
  sources: readonly RolloverSource[];
  codes: readonly string[] | undefined;
  created: ReadonlyMap<string, string>;
  toIds: ReadonlyMap<string, string>;
  copied: ReadonlyMap<string, number>;
  dryRun: boolean;
}): RolloverResult {
  const rows: RolloverRow[] = input.sources.map((source) => {
    const toId = input.toIds.get(source.code) ?? null;
    return {
      code: source.code,
      from_id: Number(source.id),
      to_id: toId === null ? null : Number(toId),
      action: input.created.has(source.code) || (input.dryRun && toId === null) ? 'create' : 'exists',
      members_copied: input.copied.get(source.id) ?? 0,
    };
  });
  const found = new Set(input.sources.map((source) => source.code));
  for (const code of new Set(input.codes ?? [])) {
    if (!found.has(code))
      rows.push({ code, from_id: null, to_id: null, action: 'missing', members_copied: 0 });
  }
  rows.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  const count = (action: RolloverAction) => rows.filter((row) => row.action === action).length;
  return {
    modules: rows,
    created: count('create'),
    existing: count('exists'),
    missing: count('missing'),
    members_copied: rows.reduce((sum, row) => sum + row.members_copied, 0),
    dry_run: input.dryRun,
  };
}
