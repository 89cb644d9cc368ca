import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';

/**
 * A course module ("module" on the wire; named apart from Nest modules). The list's text filters are served
 * by trigram GIN indexes (`gin_trgm_ops`, from the pg_trgm extension) that the schema builder cannot express:
 * declared by name with `synchronize: false`, created by the ModuleSearchIndexes migration.
 */
@Entity({ name: 'modules' })
@Unique('uq_modules_code_year', ['code', 'year'])
@Index('ix_modules_code_trgm', { synchronize: false })
@Index('ix_modules_description_trgm', { synchronize: false })
@Index('ix_modules_year', ['year'])
// The order of `sort=-year,code` with nulls last, for the list's page (migration ModuleCounts): the builder
// cannot express DESC NULLS LAST.
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
