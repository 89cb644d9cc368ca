import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
  Unique,
} from 'typeorm';
import { Assignment } from './assignment.entity.js';
import { CourseModule } from './course-module.entity.js';

/**
 * A file attached to an assignment; the bytes live in storage under `storageKey`. Not used at run time through
 * this class: it stays as the schema of the `assignment_files` table, which the delete paths read (storage keys
 * to remove) and clear with their own SQL.
 */
@Entity({ name: 'assignment_files' })
@Unique('assignment_files_storage_key_key', ['storageKey'])
@Check('assignment_files_size_check', '"size" >= 0')
@Index('ix_assignment_files_assignment', ['assignmentId'])
@Index('ix_assignment_files_module', ['moduleId'])
export class AssignmentFile {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ name: 'assignment_id', type: 'bigint' })
  assignmentId!: number;

  /** Denormalised from the assignment so a module's files are found and deleted in one statement. */
  @Column({ name: 'module_id', type: 'bigint' })
  moduleId!: number;

  @Column({ name: 'file_type', type: 'varchar', length: 100 })
  fileType!: string;

  @Column({ name: 'original_name', type: 'varchar', length: 255 })
  originalName!: string;

  @Column({ name: 'storage_key', type: 'text' })
  storageKey!: string;

  @Column({ type: 'bigint' })
  size!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @ManyToOne(() => Assignment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'assignment_id', foreignKeyConstraintName: 'assignment_files_assignment_id_fkey' })
  assignment?: Relation<Assignment>;

  @ManyToOne(() => CourseModule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'module_id', foreignKeyConstraintName: 'assignment_files_module_id_fkey' })
  module?: Relation<CourseModule>;
}
