import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { effectiveStatusOf, type EffectiveStatus } from '../course-modules/modules/effective-status.js';
import { exportBounds, openSnapshot, type Snapshot } from '../database/query-stream.js';
import { type Profile } from './lms-files.js';

/** What one export holds (docs/api.md §16), counted in its snapshot. */
export interface ExportCounts {
  classes: number;
  courses: number;
  users: number;
  enrollments: number;
  synthesized_names: number;
}

/** The year and the effective statuses one export takes: `$1` and `$2` of every statement below. */
export interface ExportScope {
  year: number;
  statuses: readonly EffectiveStatus[];
}

/** The exported memberships of the scope: role rows of the year's modules whose effective status is taken. */
const EXPORTED = `
  SELECT r.* FROM user_module_roles r JOIN modules m ON m.id = r.module_id
  WHERE m.year = $1 AND ${effectiveStatusOf('r')} = ANY($2::membership_effective_status[])`;

/** `external_id` usable as a user id by every consumer, compared byte by byte. */
const USABLE_EXTERNAL_ID_SQL = `u.external_id COLLATE "C" ~ '^[A-Za-z0-9._@-]+$'`;

/**
 * Reads of the LMS roster exports, every one in the export's snapshot (one REPEATABLE READ transaction, so the
 * files agree with each other and with the counts), and the memory of past exports (`lms_exports`).
 * Each stream has a fixed order, so an unchanged year gives the same files.
 */
@Injectable()
export class ExportsRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  open(): Promise<Snapshot> {
    return openSnapshot(this.dataSource, exportBounds(this.config));
  }

  async counts(snapshot: Snapshot, scope: ExportScope): Promise<ExportCounts> {
    const [row] = await snapshot.manager.query<ExportCounts[]>(
      `WITH m AS (SELECT id, code FROM modules WHERE year = $1),
            e AS (${EXPORTED}),
            u AS (SELECT u.given_name, u.family_name FROM users u WHERE u.id IN (SELECT user_id FROM e))
       SELECT (SELECT count(*) FROM m)::int AS classes,
              (SELECT count(DISTINCT code) FROM m)::int AS courses,
              (SELECT count(*) FROM u)::int AS users,
              (SELECT count(*) FROM e)::int AS enrollments,
              (SELECT count(*) FROM u
               WHERE coalesce(u.given_name, '') = '' OR coalesce(u.family_name, '') = '')::int AS synthesized_names`,
      [scope.year, scope.statuses],
    );
    return row;
  }

  /** Ids of exported users without a usable `external_id`, ascending: at most `limit`. */
  async unusableExternalIds(snapshot: Snapshot, scope: ExportScope, limit: number): Promise<number[]> {
    const rows = await snapshot.manager.query<{ id: number }[]>(
      `SELECT u.id FROM users u
       WHERE u.id IN (SELECT user_id FROM (${EXPORTED}) e)
         AND (u.external_id IS NULL OR NOT (${USABLE_EXTERNAL_ID_SQL}))
       ORDER BY u.id LIMIT $3`,
      [scope.year, scope.statuses, limit],
    );
    return rows.map((row) => row.id);
  }

  /** The enrolments of the newest export of `profile` and `year` that was not a preview; null when none. */
  async lastEnrollments(snapshot: Snapshot, profile: Profile, year: number): Promise<number | null> {
    const [row] = await snapshot.manager.query<{ enrollments: number }[]>(
      `SELECT enrollments FROM lms_exports WHERE profile = $1 AND year = $2 ORDER BY id DESC LIMIT 1`,
      [profile, year],
    );
    return row?.enrollments ?? null;
  }

  /** Remembers an export; committed with the snapshot, so an export cut short leaves nothing. */
  async remember(snapshot: Snapshot, profile: Profile, year: number, enrollments: number): Promise<void> {
    await snapshot.manager.query(`INSERT INTO lms_exports (profile, year, enrollments) VALUES ($1, $2, $3)`, [
      profile,
      year,
      enrollments,
    ]);
  }

  /** One row per module code of the year (`code`), by code. */
  courses(snapshot: Snapshot, scope: ExportScope): Readable {
    return snapshot.stream(
      `SELECT code FROM modules WHERE year = $1 GROUP BY code ORDER BY code COLLATE "C"`,
      [scope.year],
    );
  }

  /** The year's modules (ClassRow), by id. */
  classes(snapshot: Snapshot, scope: ExportScope): Readable {
    return snapshot.stream(`SELECT id, code, description FROM modules WHERE year = $1 ORDER BY id`, [
      scope.year,
    ]);
  }

  /** Every user holding an exported membership (UserRow), by id. */
  users(snapshot: Snapshot, scope: ExportScope): Readable {
    return snapshot.stream(
      `SELECT u.id, u.username, u.email, u.given_name, u.family_name, u.display_name, u.external_id, u.active,
              e.teaches
       FROM (SELECT user_id, bool_or(role <> 'Student') AS teaches FROM (${EXPORTED}) x GROUP BY user_id) e
       JOIN users u ON u.id = e.user_id
       ORDER BY u.id`,
      [scope.year, scope.statuses],
    );
  }

  /** Every exported membership (EnrolmentRow), by module, then user. */
  enrolments(snapshot: Snapshot, scope: ExportScope): Readable {
    return snapshot.stream(
      `SELECT r.module_id, r.user_id, r.role, ${effectiveStatusOf('r')} AS effective_status, r.starts_at,
              r.ends_at, r.status_set_at, u.external_id
       FROM user_module_roles r JOIN modules m ON m.id = r.module_id JOIN users u ON u.id = r.user_id
       WHERE m.year = $1 AND ${effectiveStatusOf('r')} = ANY($2::membership_effective_status[])
       ORDER BY r.module_id, r.user_id`,
      [scope.year, scope.statuses],
    );
  }
}
