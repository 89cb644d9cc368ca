import { type MigrationInterface, type QueryRunner } from 'typeorm';

export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE users (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        username varchar(64) NOT NULL,
        email varchar(320) NOT NULL,
        password_hash text NOT NULL,
        admin boolean NOT NULL DEFAULT false,
        password_changed_at timestamptz(3) NOT NULL DEFAULT now(),
        avatar_key text,
        avatar_content_type varchar(32),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX uq_users_username_lower ON users (lower(username))`);
    await queryRunner.query(`CREATE UNIQUE INDEX uq_users_email_lower ON users (lower(email))`);

    await queryRunner.query(`
      CREATE TABLE modules (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        code varchar(255) NOT NULL,
        year integer NOT NULL,
        description varchar(1000),
        credits integer NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT uq_modules_code_year UNIQUE (code, year)
      )`);

    await queryRunner.query(
      `CREATE TYPE module_role AS ENUM ('Lecturer', 'AssistantLecturer', 'Tutor', 'Student')`,
    );
    await queryRunner.query(`
      CREATE TABLE user_module_roles (
        user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        module_id bigint NOT NULL REFERENCES modules (id) ON DELETE CASCADE,
        role module_role NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, module_id)
      )`);
    // The primary key serves "modules of a user"; this serves "people of a module, by role".
    await queryRunner.query(
      `CREATE INDEX ix_user_module_roles_module_role ON user_module_roles (module_id, role)`,
    );

    await queryRunner.query(`
      CREATE TABLE assignments (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        module_id bigint NOT NULL REFERENCES modules (id) ON DELETE CASCADE,
        name varchar(255) NOT NULL,
        description text,
        type varchar(32) NOT NULL,
        opens_at timestamptz(3),
        due_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX ix_assignments_module ON assignments (module_id)`);

    await queryRunner.query(`
      CREATE TABLE assignment_files (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        assignment_id bigint NOT NULL REFERENCES assignments (id) ON DELETE CASCADE,
        module_id bigint NOT NULL REFERENCES modules (id) ON DELETE CASCADE,
        file_type varchar(100) NOT NULL,
        original_name varchar(255) NOT NULL,
        storage_key text NOT NULL UNIQUE,
        size bigint NOT NULL CHECK (size >= 0),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX ix_assignment_files_assignment ON assignment_files (assignment_id)`,
    );
    await queryRunner.query(`CREATE INDEX ix_assignment_files_module ON assignment_files (module_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE assignment_files`);
    await queryRunner.query(`DROP TABLE assignments`);
    await queryRunner.query(`DROP TABLE user_module_roles`);
    await queryRunner.query(`DROP TYPE module_role`);
    await queryRunner.query(`DROP TABLE modules`);
    await queryRunner.query(`DROP TABLE users`);
  }
}
