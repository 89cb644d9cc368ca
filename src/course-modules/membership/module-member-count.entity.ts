import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { CourseModule } from '../modules/course-module.entity.js';
import { ModuleRole } from '../modules/module-role.js';

/**
 * How many role rows a module has of one role: kept by triggers on `user_module_roles` (migration
 * MemberListsAtScale), in the writing transaction. Read by the personnel and student lists for their unfiltered
 * totals, never written by the service.
 */
@Entity({ name: 'module_member_counts' })
export class ModuleMemberCount {
  @PrimaryColumn({ name: 'module_id', type: 'bigint' })
  moduleId!: number;

  @PrimaryColumn({ type: 'enum', enum: ModuleRole, enumName: 'module_role' })
  role!: ModuleRole;

  @Column({ type: 'integer' })
  members!: number;

  @ManyToOne(() => CourseModule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'module_id', foreignKeyConstraintName: 'module_member_counts_module_id_fkey' })
  module?: Relation<CourseModule>;
}
