import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { CourseModule } from './course-module.entity.js';

/**
 * Coursework set in a module. Not exposed over HTTP and not used at run time through this class: it stays as
 * the schema of the `assignments` table, which the module and user delete paths clear with their own SQL.
 */
@Entity({ name: 'assignments' })
@Index('ix_assignments_module', ['moduleId'])
export class Assignment {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ name: 'module_id', type: 'bigint' })
  moduleId!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  /** e.g. coursework, exam, quiz. */
  @Column({ type: 'varchar', length: 32 })
  type!: string;

  @Column({ name: 'opens_at', type: 'timestamptz', precision: 3, nullable: true })
  opensAt!: Date | null;

  @Column({ name: 'due_at', type: 'timestamptz', precision: 3, nullable: true })
  dueAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @ManyToOne(() => CourseModule, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'module_id', foreignKeyConstraintName: 'assignments_module_id_fkey' })
  module?: Relation<CourseModule>;
}
