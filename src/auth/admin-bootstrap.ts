import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { PasswordHasher } from './password-hasher.js';

/** Arbitrary, fixed: serialises the first-admin check across instances starting together. */
const ADMIN_BOOTSTRAP_LOCK = 7_240_001;

/** Creates the first administrator when the users table is empty (SPEC §2). */
@Injectable()
export class AdminBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger(AdminBootstrap.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly hasher: PasswordHasher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const [{ any }] = await this.dataSource.query<{ any: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM users) AS any`,
    );
    if (any) return;
    const { adminUsername, adminEmail, adminPassword } = this.config;
    const password = adminPassword ?? randomBytes(18).toString('base64url');
    const hash = await this.hasher.hash(password);
    const created = await this.dataSource.transaction(async (manager) => {
      await manager.query(`SELECT pg_advisory_xact_lock($1)`, [ADMIN_BOOTSTRAP_LOCK]);
      return manager.query<unknown[]>(
        `INSERT INTO users (username, email, password_hash, admin)
         SELECT $1, $2, $3, true WHERE NOT EXISTS (SELECT 1 FROM users) RETURNING id`,
        [adminUsername, adminEmail, hash],
      );
    });
    if (created.length === 0) return;
    if (adminPassword === undefined) {
      this.logger.warn(
        `Created the first administrator "${adminUsername}" with the generated password ${password} ` +
          '(shown once; change it with PUT /api/auth/password)',
      );
    } else {
      this.logger.log(`Created the first administrator "${adminUsername}" from ADMIN_PASSWORD`);
    }
  }
}
