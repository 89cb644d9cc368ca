import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { CourseModule } from './course-module.entity.js';

/** Coursework set in a module. Not exposed over HTTP yet; deleted with its module. */
@Entity({ name: 'assignments' })
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
  @JoinColumn({ name: 'module_id' })
  module?: Relation<CourseModule>;
}
