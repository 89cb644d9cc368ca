import jwt, { type Algorithm } from 'jsonwebtoken';
import { type DataSource } from 'typeorm';
import { hashPassword } from '../../src/users/argon2.js';
import { type ModuleRole } from '../../src/course-modules/modules/module-role.js';
import { TEST_JWT_SECRET } from './app.js';

export const DEFAULT_PASSWORD = 'correct-horse-battery';

const hashes = new Map<string, Promise<string>>();
/** Hashing is slow by design; factories hash each distinct password once per run. */
function hashOf(password: string): Promise<string> {
  if (!hashes.has(password)) {
    hashes.set(password, hashPassword(password));
  }
  return hashes.get(password)!;
}

/** Where the factories write: the service's data source, or anything that runs SQL the way it does. */
export type Database = Pick<DataSource, 'query'>;

let sequence = 0;
const next = () => `${process.pid}${++sequence}`;

export interface UserRow {
  id: number;
  username: string;
  email: string;
  admin: boolean;
  password: string;
  created_at: Date;
  updated_at: Date;
}

export interface MakeUser {
  username?: string;
  email?: string;
  password?: string;
  admin?: boolean;
}

/** Inserts a valid user straight into the database (`makeUser(ds, { admin: true })`). */
export async function makeUser(dataSource: Database, overrides: MakeUser = {}): Promise<UserRow> {
  const n = next();
  const username = overrides.username ?? `user${n}`;
  const password = overrides.password ?? DEFAULT_PASSWORD;
  const [row] = await dataSource.query<Omit<UserRow, 'password'>[]>(
    `INSERT INTO users (username, email, password_hash, admin) VALUES ($1, $2, $3, $4)
     RETURNING id, username, email, admin, created_at, updated_at`,
    [
      username,
      overrides.email ?? `${username}@example.edu`.toLowerCase(),
      await hashOf(password),
      overrides.admin ?? false,
    ],
  );
  return { ...row, password };
}

export interface ModuleRow {
  id: number;
  code: string;
  year: number;
  description: string | null;
  credits: number;
  created_at: Date;
  updated_at: Date;
}

let moduleSequence = 0;

/** Inserts a valid module (`makeModule(ds, { year: 2025 })`); codes are unique across the run. */
export async function makeModule(
  dataSource: Database,
  overrides: Partial<Pick<ModuleRow, 'code' | 'year' | 'description' | 'credits'>> = {},
): Promise<ModuleRow> {
  const n = ++moduleSequence;
  const code =
    overrides.code ??
    `${String.fromCharCode(65 + (Math.floor(n / 1000) % 26))}MD${String(n % 1000).padStart(3, '0')}`;
  const [row] = await dataSource.query<ModuleRow[]>(
    `INSERT INTO modules (code, year, description, credits) VALUES ($1, $2, $3, $4)
     RETURNING id, code, year, description, credits, created_at, updated_at`,
    [
      code,
      overrides.year ?? 2026,
      overrides.description === undefined ? `Module ${code}` : overrides.description,
      overrides.credits ?? 15,
    ],
  );
  return row;
}

export async function assignRole(dataSource: Database, userId: number, moduleId: number, role: ModuleRole) {
  await dataSource.query(
    `INSERT INTO user_module_roles (user_id, module_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (user_id, module_id) DO UPDATE SET role = EXCLUDED.role`,
    [userId, moduleId, role],
  );
}

export interface TokenOptions {
  secret?: string;
  algorithm?: Algorithm;
  expiresIn?: number;
  iat?: number;
}

/** Signs a token as the service would (HS256, `sub`, `admin`), or forged when options say so. */
export function tokenFor(user: { id: number; admin: boolean }, options: TokenOptions = {}): string {
  const iat = options.iat ?? Math.floor(Date.now() / 1000);
  return jwt.sign(
    { sub: Number(user.id), admin: user.admin, iat, exp: iat + (options.expiresIn ?? 3600) },
    options.secret ?? TEST_JWT_SECRET,
    {
      algorithm: options.algorithm ?? 'HS256',
    },
  );
}

/** A token with `alg: none` and no signature. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
}
