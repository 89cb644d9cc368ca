import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One LMS roster export that was not a preview (docs/api.md §16): what `max_drop` compares the next export of
 * the same profile and year with. Rows are only ever inserted; the newest per profile and year counts.
 */
@Entity({ name: 'lms_exports' })
@Index('ix_lms_exports_profile_year', ['profile', 'year', 'id'])
export class LmsExport {
  @PrimaryGeneratedColumn('identity', { type: 'bigint', generatedIdentity: 'ALWAYS' })
  id!: number;

  /** `oneroster-1.1` or `canvas-sis`. */
  @Column({ type: 'varchar', length: 16 })
  profile!: string;

  @Column({ type: 'integer' })
  year!: number;

  /** The rows of its enrollments.csv. */
  @Column({ type: 'integer' })
  enrollments!: number;

  @CreateDateColumn({ name: 'exported_at', type: 'timestamptz', precision: 3 })
  exportedAt!: Date;
}
