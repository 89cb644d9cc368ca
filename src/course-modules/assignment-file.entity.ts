import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Assignment } from './assignment.entity.js';
import { CourseModule } from './course-module.entity.js';

/** A file attached to an assignment; the bytes live in storage under `storageKey`. */
@Entity({ name: 'assignment_files' })
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
  @JoinColumn({ name: 'assignment_id' })
  assignment?: Relation<Assignment>;

  @ManyToOne(() => CourseModule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'module_id' })
  module?: Relation<CourseModule>;
}
