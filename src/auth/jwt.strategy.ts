import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { Strategy } from 'passport-jwt';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';
import { type AuthUser } from '../core/decorators.js';
import { InvalidToken } from '../core/errors.js';
import { bearerToken } from './bearer-token.js';
import { jwtKey } from './jwt-key.js';
import { UserAccessCache } from '../users/user-access.cache.js';

interface Claims {
  sub?: unknown;
  admin?: unknown;
  iat?: unknown;
}

@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly access: UserAccessCache,
  ) {
    super({
      jwtFromRequest: bearerToken,
      // The typings say string | Buffer; jsonwebtoken takes a KeyObject too (see jwt-key.ts).
      secretOrKey: jwtKey(config.jwtSecret!) as unknown as Buffer,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  async validate(claims: Claims): Promise<AuthUser> {
    const { sub, admin, iat } = claims;
    if (
      !Number.isSafeInteger(sub) ||
      (sub as number) < 1 ||
      typeof admin !== 'boolean' ||
      typeof iat !== 'number'
    ) {
      throw new InvalidToken();
    }
    const user = await this.access.get(sub as number);
    if (!user || iat < user.passwordChangedAt) throw new InvalidToken();
    return { id: sub as number, admin: admin && user.admin };
  }
}
