import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';

/** A course module ("module" on the wire; named apart from Nest modules). */
@Entity({ name: 'modules' })
@Unique('uq_modules_code_year', ['code', 'year'])
// The order of `sort=-year,code` with nulls last (migration ModuleCounts); TypeORM cannot express DESC NULLS LAST.
@Index('ix_modules_year_desc_code', { synchronize: false })
export class CourseModule {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  code!: string;

  @Column({ type: 'integer' })
  year!: number;

  @Column({ type: 'varchar', length: 1000, nullable: true })
  description!: string | null;

  @Column({ type: 'integer' })
  credits!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;
}
