import { Injectable } from '@nestjs/common';
import { type RequestContext } from '../../audit/audit-actions.js';
import { AuditService } from '../../audit/audit.service.js';
import { type Transaction, Transactions } from '../../database/transactions.js';
import { CourseModulesRepository } from '../modules/course-modules.repository.js';
import { type RolloverInput } from './dto/rollover-body.dto.js';
import { type ModuleSource, toModuleResponse } from '../modules/module.mapper.js';
import { type NewChangeEvent } from '../../events/change-event-types.js';
import { ChangeEventsService } from '../../events/change-events.service.js';
import { ModuleRolesRepository } from '../membership/module-roles.repository.js';
import {
  ROLLOVER_MAX,
  rolloverResult,
  type RolloverResult,
  type RolloverSource,
  TooManyModules,
} from './rollover.js';

/** What an applied rollover wrote, for its audit event. */
interface RolloverWrites {
  created: ModuleSource[];
  membersCopied: number;
}

/** `module.created` per new module (docs/api.md §12), written before the modules' `module.members_changed`. */
const createdEvents = (created: readonly ModuleSource[]): NewChangeEvent[] =>
  created.map((module) => ({ type: 'module.created' as const, data: toModuleResponse(module) }));

/**
 * `POST /api/modules/rollover` (docs/api.md §13): next year's modules and their staff in one transaction, with a
 * fixed number of statements whatever the number of modules (docs/sql/modules.md).
 */
@Injectable()
export class RolloverService {
  constructor(
    private readonly transactions: Transactions,
    private readonly modules: CourseModulesRepository,
    private readonly roles: ModuleRolesRepository,
    private readonly audit: AuditService,
    private readonly changeEvents: ChangeEventsService,
  ) {}

  /**
   * All or nothing: the source modules are read (and, unless a dry run, locked) first, refused (413) beyond
   * {@link ROLLOVER_MAX}; then the missing namesakes are created and the members they lack copied, with one audit
   * event when anything changed. A dry run reads and counts, and writes nothing.
   */
  async rollover(input: RolloverInput, dryRun: boolean, context: RequestContext): Promise<RolloverResult> {
    if (input.codes !== undefined && new Set(input.codes).size > ROLLOVER_MAX) throw new TooManyModules();
    // Thousands of modules in one transaction: long-running work, under the long database bounds.
    return this.transactions.runLong(async (transaction) => {
      const found = await this.modules.rolloverSources(input, ROLLOVER_MAX + 1, {
        lock: !dryRun,
        manager: transaction,
      });
      if (found.length > ROLLOVER_MAX) throw new TooManyModules();
      const namesakes =
        found.length > 0
          ? await this.modules.idsByCode(
              found.map((source) => source.code),
              input.toYear,
              transaction,
            )
          : new Map<string, string>();
      const sources = found.map((source) => ({ ...source, toId: namesakes.get(source.code) ?? null }));
      if (dryRun) return this.check(input, sources, transaction);
      const { result, writes } = await this.apply(input, sources, transaction);
      if (writes.created.length > 0 || writes.membersCopied > 0) {
        await this.audit.record(transaction, context, {
          action: 'module.rollover',
          targetType: 'module',
          targetIds: writes.created.map((module) => module.id),
          summary: {
            from_year: input.fromYear,
            to_year: input.toYear,
            created: result.created,
            existing: result.existing,
            missing: result.missing,
            members_copied: result.members_copied,
          },
        });
      }
      return result;
    });
  }

  /** The dry run: what {@link apply} would do, from one count (a module still to create has no members). */
  private async check(
    input: RolloverInput,
    sources: readonly RolloverSource[],
    transaction: Transaction,
  ): Promise<RolloverResult> {
    const toIds = new Map(
      sources.flatMap((source) => (source.toId === null ? [] : [[source.code, source.toId] as const])),
    );
    const copied =
      sources.length > 0 && input.roles.length > 0
        ? await this.roles.countMembersToCopy(
            { from: sources.map((s) => s.id), to: sources.map((s) => s.toId) },
            input.roles,
            transaction,
          )
        : new Map<string, number>();
    return rolloverResult({ sources, codes: input.codes, created: new Map(), toIds, copied, dryRun: true });
  }

  /**
   * Creates the missing namesakes in one statement and copies the members in another, which also writes the
   * change events. A namesake that someone else created between the read and the insert is looked up again (a
   * further statement, only then) and handled as existing.
   */
  private async apply(
    input: RolloverInput,
    sources: readonly RolloverSource[],
    transaction: Transaction,
  ): Promise<{ result: RolloverResult; writes: RolloverWrites }> {
    const toIds = new Map<string, string>();
    for (const source of sources) if (source.toId !== null) toIds.set(source.code, source.toId);
    const lacking = sources.filter((source) => source.toId === null);
    const created =
      lacking.length > 0
        ? await this.modules.insertCopies(
            lacking.map((source) => source.id),
            input.toYear,
            transaction,
          )
        : [];
    const createdIds = new Map(created.map((module) => [module.code, String(module.id)]));
    for (const [code, id] of createdIds) toIds.set(code, id);
    const raced = lacking.filter((source) => !createdIds.has(source.code)).map((source) => source.code);
    if (raced.length > 0) {
      for (const [code, id] of await this.modules.idsByCode(raced, input.toYear, transaction))
        toIds.set(code, id);
    }

    const paired = sources.filter((source) => toIds.has(source.code));
    const counts = new Map<string, number>();
    let membersCopied = 0;
    if (paired.length > 0 && input.roles.length > 0) {
      // The members and every change event in one statement, made by PostgreSQL (docs/api.md §13).
      const written = await this.roles.copyMembers(
        { from: paired.map((s) => s.id), to: paired.map((s) => toIds.get(s.code)!) },
        input.roles,
        createdEvents(created),
        transaction,
      );
      this.changeEvents.noteWritten(transaction, written.events);
      const fromIdOf = new Map(paired.map((source) => [toIds.get(source.code)!, source.id]));
      for (const [toId, n] of written.copied) {
        counts.set(fromIdOf.get(toId)!, n);
        membersCopied += n;
      }
    } else {
      await this.changeEvents.record(transaction, createdEvents(created));
    }
    const result = rolloverResult({
      sources,
      codes: input.codes,
      created: createdIds,
      toIds,
      copied: counts,
      dryRun: false,
    });
    return { result, writes: { created, membersCopied } };
  }
}
