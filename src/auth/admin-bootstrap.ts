import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { PasswordHasher } from '../users/password-hasher.js';
import { UsersRepository } from '../users/users.repository.js';
import { SsoIdentityTaken } from '../users/users.errors.js';
import { UsersService } from '../users/users.service.js';

/** Creates the first administrator when the users table is empty (docs/api.md §2). */
@Injectable()
export class AdminBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger(AdminBootstrap.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    // Reads only; the writes go through the users writer.
    private readonly users: UsersRepository,
    private readonly hasher: PasswordHasher,
    private readonly usersService: UsersService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.createFirstAdmin();
    await this.bindFirstAdmin();
  }

  /**
   * ADMIN_OIDC_SUBJECT: binds the bootstrap admin, when it exists, is an admin and is unbound, to
   * (OIDC_ISSUER, that subject), so that a service with PASSWORD_LOGIN=false has an admin (docs/sso.md).
   */
  private async bindFirstAdmin(): Promise<void> {
    const settings = this.config.oidc;
    if (settings?.adminSubject === undefined) return;
    const admin = await this.users.ssoCandidateByUsername(this.config.adminUsername);
    if (!admin || admin.ssoSubject !== null) return;
    if (!admin.admin) {
      this.logger.warn(
        `ADMIN_OIDC_SUBJECT: "${this.config.adminUsername}" is not an administrator; not bound`,
      );
      return;
    }
    try {
      await this.usersService.setSsoBinding(String(admin.id), settings.issuer, settings.adminSubject, {
        actorId: null,
        requestId: null,
        clientIp: null,
      });
      this.logger.log(`Bound the administrator "${this.config.adminUsername}" to ADMIN_OIDC_SUBJECT`);
    } catch (error) {
      // Bound to another user already: the service still starts; an admin sorts it out.
      if (!(error instanceof SsoIdentityTaken)) throw error;
      this.logger.warn('ADMIN_OIDC_SUBJECT is bound to another user; the bootstrap admin was not bound');
    }
  }

  private async createFirstAdmin(): Promise<void> {
    const any = await this.users.any();
    if (any) return;
    const { adminUsername, adminEmail, adminPassword } = this.config;
    const password = adminPassword ?? randomBytes(18).toString('base64url');
    const hash = await this.hasher.hash(password);
    const created = await this.usersService.insertFirstAdmin({
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
