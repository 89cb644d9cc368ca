import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The membership lifecycle (docs/api.md §15): a role row gains `status`, `starts_at` and `ends_at`; existing rows
 * stay `active` and open (constant defaults: no table rewrite).
 *
 * - `membership_effective(status, starts_at, ends_at, at)` is the one definition of the effective status, at a
 *   given moment (every statement passes `now()`; the time sweep compares two moments). A plain SQL function
 *   declared IMMUTABLE, so the planner inlines it as a CASE expression: no call per row.
 * - `reported_status`: the effective status a change event last reported for the row. A trigger sets it from the
 *   row's own values whenever a write changes status or dates (that write's change event reports them); the
 *   time sweep finds the rows whose window has opened or closed since (`starts_at`/`ends_at` passed while
 *   `reported_status` still says otherwise), writes one event per module and updates `reported_status` in the
 *   same transaction, so an event is written once whatever the number of replicas (docs/decisions.md).
 * - Indexes: `ix_user_module_roles_member` covers every column the caller's own reads test (`/me`, the member's
 *   module list, the caller's role in a module), so they stay index-only scans; the two partial indexes hold only
 *   the rows whose window is still to open or close, the sweep's candidates.
 */
export class MembershipLifecycle1764600000000 implements MigrationInterface {
  name = 'MembershipLifecycle1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TYPE membership_status AS ENUM ('active', 'inactive', 'completed')`);
    await queryRunner.query(
      `CREATE TYPE membership_effective_status AS ENUM ('active', 'upcoming', 'completed', 'inactive')`,
    );
    await queryRunner.query(`
      ALTER TABLE user_module_roles
        ADD COLUMN status membership_status NOT NULL DEFAULT 'active',
        ADD COLUMN starts_at timestamptz(3),
        ADD COLUMN ends_at timestamptz(3),
        ADD COLUMN reported_status membership_effective_status NOT NULL DEFAULT 'active',
        ADD CONSTRAINT ck_user_module_roles_dates CHECK (ends_at > starts_at)`);
    await queryRunner.query(`
      CREATE FUNCTION membership_effective(
        status membership_status, starts_at timestamptz, ends_at timestamptz, at timestamptz
      ) RETURNS membership_effective_status LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE
          WHEN status = 'inactive' THEN 'inactive'::membership_effective_status
          WHEN status = 'completed' OR ends_at <= at THEN 'completed'::membership_effective_status
          WHEN starts_at > at THEN 'upcoming'::membership_effective_status
          ELSE 'active'::membership_effective_status
        END
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION user_module_roles_reported() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.reported_status := membership_effective(NEW.status, NEW.starts_at, NEW.ends_at, now());
        RETURN NEW;
      END
      $$`);
    // Only rows with something to compute: a plain active, open row keeps the column's default.
    await queryRunner.query(`
      CREATE TRIGGER tr_user_module_roles_reported_insert BEFORE INSERT ON user_module_roles FOR EACH ROW
      WHEN (NEW.status <> 'active' OR NEW.starts_at IS NOT NULL OR NEW.ends_at IS NOT NULL)
      EXECUTE FUNCTION user_module_roles_reported()`);
    await queryRunner.query(`
      CREATE TRIGGER tr_user_module_roles_reported_update BEFORE UPDATE ON user_module_roles FOR EACH ROW
      WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.starts_at IS DISTINCT FROM NEW.starts_at
            OR OLD.ends_at IS DISTINCT FROM NEW.ends_at)
      EXECUTE FUNCTION user_module_roles_reported()`);
    await queryRunner.query(`
      CREATE INDEX ix_user_module_roles_member ON user_module_roles (user_id, module_id)
        INCLUDE (role, status, starts_at, ends_at)`);
    await queryRunner.query(`
      CREATE INDEX ix_user_module_roles_opening ON user_module_roles (starts_at)
        WHERE reported_status = 'upcoming'`);
    await queryRunner.query(`
      CREATE INDEX ix_user_module_roles_closing ON user_module_roles (ends_at)
        WHERE reported_status IN ('active', 'upcoming') AND ends_at IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ix_user_module_roles_closing`);
    await queryRunner.query(`DROP INDEX ix_user_module_roles_opening`);
    await queryRunner.query(`DROP INDEX ix_user_module_roles_member`);
    await queryRunner.query(`DROP TRIGGER tr_user_module_roles_reported_update ON user_module_roles`);
    await queryRunner.query(`DROP TRIGGER tr_user_module_roles_reported_insert ON user_module_roles`);
    await queryRunner.query(`DROP FUNCTION user_module_roles_reported()`);
    await queryRunner.query(
      `DROP FUNCTION membership_effective(membership_status, timestamptz, timestamptz, timestamptz)`,
    );
    await queryRunner.query(`
      ALTER TABLE user_module_roles
        DROP CONSTRAINT ck_user_module_roles_dates,
        DROP COLUMN reported_status, DROP COLUMN ends_at, DROP COLUMN starts_at, DROP COLUMN status`);
    await queryRunner.query(`DROP TYPE membership_effective_status`);
    await queryRunner.query(`DROP TYPE membership_status`);
  }
}
