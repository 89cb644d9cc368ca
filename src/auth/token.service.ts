import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { APP_CONFIG } from '../config/config.module.js';
import { type AppConfig } from '../config/app-config.js';

export interface IssuedToken {
  token: string;
  expires_at: string;
}

@Injectable()
export class TokenService {
  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** An HS256 token with `sub`, `admin`, `iat` and `exp`; `issuedAt` pins `iat` to a password change. */
  issue(user: { id: number; admin: boolean }, issuedAt = new Date()): IssuedToken {
    const iat = Math.floor(issuedAt.getTime() / 1000);
    const exp = iat + this.config.jwtExpiresIn;
    const token = this.jwt.sign({ sub: Number(user.id), admin: user.admin, iat, exp });
    return { token, expires_at: new Date(exp * 1000).toISOString() };
  }
}
