import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { UsersRepository } from '../users/users.repository.js';

/** Creates the first administrator when the users table is empty (docs/api.md §2). */
@Injectable()
export class AdminBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger(AdminBootstrap.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const any = await this.users.any();
    if (any) return;
    const { adminUsername, adminEmail, adminPassword } = this.config;
    const password = adminPassword ?? randomBytes(18).toString('base64url');
    const hash = await this.hasher.hash(password);
    const created = await this.users.insertFirstAdmin({
      username: adminUsername,
      email: adminEmail,
      passwordHash: hash,
    });
    if (!created) return;
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
