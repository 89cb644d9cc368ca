import { Inject, Injectable, StreamableFile } from '@nestjs/common';
import { type RequestContext } from '../audit/audit-actions.js';
import { AuditService } from '../audit/audit.service.js';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Clock } from '../core/clock.js';
import { type AuthUser } from '../core/decorators.js';
import { type Snapshot } from '../database/query-stream.js';
import { LISTED_IDS, NothingToExport, TooManyDropped, UnusableExternalIds } from './export.errors.js';
import { type ExportParams } from './export-params.js';
import { type ExportCounts, type ExportScope, ExportsRepository } from './exports.repository.js';
import {
  CANVAS_HEADERS,
  type ClassRow,
  type EnrolmentRow,
  LmsRecords,
  ONEROSTER_HEADERS,
  type Profile,
  type UserRow,
} from './lms-files.js';
import { type CsvEntry, zipStream } from './lms-zip.js';

/** The answer of `preview=true`, and what the audit event keeps of an export (docs/api.md §16). */
export interface ExportReport {
  profile: Profile;
  year: number;
  /** Rows per data file the zip holds (the manifest left out). */
  files: Record<string, number>;
  synthesized_names: number;
  enrollments: number;
  previous_enrollments: number | null;
  drop_percent: number;
}

/** floor(100 × (previous − now) / previous); 0 when not fewer, or when there was no previous export. */
export function dropPercent(previous: number | null, now: number): number {
  if (previous === null || previous === 0 || now >= previous) return 0;
  return Math.floor((100 * (previous - now)) / previous);
}

/** The files of a profile, with their row counts; files without rows are left out of the zip. */
function fileCounts(profile: Profile, counts: ExportCounts): Record<string, number> {
  const all: Record<string, number> =
    profile === 'oneroster-1.1'
      ? {
          'orgs.csv': 1,
          'academicSessions.csv': 1,
          'courses.csv': counts.courses,
          'classes.csv': counts.classes,
          'users.csv': counts.users,
          'enrollments.csv': counts.enrollments,
        }
      : {
          'users.csv': counts.users,
          'terms.csv': 1,
          'courses.csv': counts.classes,
          'enrollments.csv': counts.enrollments,
        };
  return Object.fromEntries(Object.entries(all).filter(([, rows]) => rows > 0));
}

/** The LMS roster exports: OneRoster 1.1 CSV and Canvas SIS CSV of one academic year, streamed as a zip. */
@Injectable()
export class ExportsService {
  constructor(
    private readonly exports: ExportsRepository,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The report (preview) or the zip. Every check runs before the first byte, in one snapshot that the zip's
   * files are then read from; the audit event and the export's memory commit with it once every row was read.
   */
  async export(
    profile: Profile,
    params: ExportParams,
    caller: AuthUser,
    context: RequestContext,
  ): Promise<ExportReport | StreamableFile> {
    const scope: ExportScope = { year: params.year, statuses: params.statuses };
    const snapshot = await this.exports.open();
    try {
      const counts = await this.exports.counts(snapshot, scope);
      if (counts.classes === 0) throw new NothingToExport(params.year);
      if (params.userKey === 'external_id') {
        const unusable = await this.exports.unusableExternalIds(snapshot, scope, LISTED_IDS + 1);
        if (unusable.length > 0) throw new UnusableExternalIds(unusable);
      }
      const previous = await this.exports.lastEnrollments(snapshot, profile, params.year);
      const report: ExportReport = {
        profile,
        year: params.year,
        files: fileCounts(profile, counts),
        synthesized_names: counts.synthesized_names,
        enrollments: counts.enrollments,
        previous_enrollments: previous,
        drop_percent: dropPercent(previous, counts.enrollments),
      };
      if (params.preview) {
        snapshot.abort();
        return report;
      }
      if (params.maxDrop !== undefined && report.drop_percent > params.maxDrop) {
        throw new TooManyDropped(previous! - counts.enrollments, previous!, params.maxDrop);
      }
      await this.exports.remember(snapshot, profile, params.year, counts.enrollments);
      await this.audit.record(snapshot.manager, context, {
        action: 'export.lms',
        targetType: null,
        targetIds: [],
        summary: {
          profile,
          year: params.year,
          user_key: params.userKey,
          files: report.files,
          ...(caller.integration ? { token_id: caller.integration.tokenId } : {}),
        },
      });
      const entries = this.entries(profile, params, snapshot, scope, report.files);
      // The audit event and the memory commit once every row was read, before the zip's last bytes go out.
      const zip = zipStream(entries, new Date(this.clock.now()), {
        rowsRead: () => snapshot.commit(),
        failed: () => snapshot.abort(),
      });
      return new StreamableFile(zip, {
        type: 'application/zip',
        disposition: `attachment; filename="${profile}-${params.year}.zip"`,
      });
    } catch (error) {
      snapshot.abort();
      throw error;
    }
  }

  private entries(
    profile: Profile,
    params: ExportParams,
    snapshot: Snapshot,
    scope: ExportScope,
    files: Record<string, number>,
  ): CsvEntry[] {
    const records = new LmsRecords(this.config.lmsExport, params.year, params.userKey);
    let entries: CsvEntry[];
    if (profile === 'oneroster-1.1') {
      const h = ONEROSTER_HEADERS;
      entries = [
        {
          name: 'manifest.csv',
          header: h['manifest.csv'],
          records: records.manifest(new Set(Object.keys(files))),
        },
        { name: 'orgs.csv', header: h['orgs.csv'], records: [records.org()] },
        {
          name: 'academicSessions.csv',
          header: h['academicSessions.csv'],
          records: [records.academicSession()],
        },
        {
          name: 'courses.csv',
          header: h['courses.csv'],
          rows: () => this.exports.courses(snapshot, scope),
          record: (row: { code: string }) => records.course(row.code),
        },
        {
          name: 'classes.csv',
          header: h['classes.csv'],
          rows: () => this.exports.classes(snapshot, scope),
          record: (row: ClassRow) => records.class(row),
        },
        {
          name: 'users.csv',
          header: h['users.csv'],
          rows: () => this.exports.users(snapshot, scope),
          record: (row: UserRow) => records.user(row),
        },
        {
          name: 'enrollments.csv',
          header: h['enrollments.csv'],
          rows: () => this.exports.enrolments(snapshot, scope),
          record: (row: EnrolmentRow) => records.enrolment(row),
        },
      ];
    } else {
      const h = CANVAS_HEADERS;
      entries = [
        {
          name: 'users.csv',
          header: h['users.csv'],
          rows: () => this.exports.users(snapshot, scope),
          record: (row: UserRow) => records.canvasUser(row, params.userKey),
        },
        { name: 'terms.csv', header: h['terms.csv'], records: [records.canvasTerm()] },
        {
          name: 'courses.csv',
          header: h['courses.csv'],
          rows: () => this.exports.classes(snapshot, scope),
          record: (row: ClassRow) => records.canvasCourse(row),
        },
        {
          name: 'enrollments.csv',
          header: h['enrollments.csv'],
          rows: () => this.exports.enrolments(snapshot, scope),
          record: (row: EnrolmentRow) => records.canvasEnrolment(row),
        },
      ];
    }
    // The manifest is always there; every other file only with rows (a header-only file would remove everything).
    return entries.filter((entry) => entry.name === 'manifest.csv' || entry.name in files);
  }
}
