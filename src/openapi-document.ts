import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { loadConfig } from './config/app-config.js';
import { buildOpenApiDocument } from './openapi/setup.js';
import { scimOpenApi } from './scim/scim.openapi.js';

/**
 * Writes the OpenAPI document the service serves at /api/docs-json with SCIM switched on (so the identity
 * provider's contract is in it), without a database: Nest's preview mode scans the modules and controllers (all
 * the document is made of) but instantiates no provider, so nothing connects. Usage:
 * `node dist/src/openapi-document.js [file]` (stdout without a file).
 */
async function main(): Promise<void> {
  const config = {
    ...loadConfig({}),
    databaseUrl: 'postgres://unused@127.0.0.1:1/unused',
    jwtSecret: 'x'.repeat(32),
    logLevel: 'silent' as const,
    scimEnabled: true,
  };
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    new FastifyAdapter(),
    {
      preview: true,
      logger: false,
      abortOnError: false,
    },
  );
  app.setGlobalPrefix('api');
  const json = `${JSON.stringify(buildOpenApiDocument(app, undefined, scimOpenApi), null, 2)}\n`;
  await app.close();
  const file = process.argv[2];
  if (file) await writeFile(file, json);
  else process.stdout.write(json);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
