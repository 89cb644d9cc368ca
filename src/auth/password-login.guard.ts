import { type CanActivate, Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { PasswordLoginDisabled } from './auth.errors.js';

/**
 * PASSWORD_LOGIN=false: the login and password-change routes answer 403 before anything is checked, counted or
 * throttled.
 */
@Injectable()
export class PasswordLoginGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(): boolean {
    if (!this.config.passwordLogin) throw new PasswordLoginDisabled();
    return true;
  }
}
