import { randomUUID } from 'node:crypto';
import { type IncomingMessage } from 'node:http';
import fastifyMultipart from '@fastify/multipart';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { LogController } from 'fastify';
import { type Logger } from 'pino';
import { AppModule, type ResolvedConfig } from './app.module.js';
import { type AppConfig } from './config/app-config.js';
import { resolveJwtSecret } from './config/jwt-secret.js';
import { boundJsonBodies } from './http/body-shape.js';
import { drainEarlyAnswers } from './http/early-answers.js';
import { requestId } from './http/request-id.js';
import { requestLog } from './http/request-log.js';
import { answerRequestTimeouts, requestTimeoutOptions } from './http/request-timeout.js';
import { registerCsvBodyParser } from './csv/csv-upload.js';
import { hashStreamedBodies } from './idempotency/idempotent-bodies.js';
import { registerScimJsonParser } from './scim/scim-json.js';
import { scimOpenApi } from './scim/scim.openapi.js';
import { answerFrameworkError } from './http/framework-errors.js';
import { createRootLogger, NestPinoLogger } from './observability/logger.js';
import { Draining } from './core/draining.js';
import { Metrics } from './observability/metrics.js';
import { docsRouteHeaders } from './openapi/docs-headers.js';
import { docsSignIn, setupOpenApi } from './openapi/setup.js';
import { securityHeaders } from './http/security-headers.js';
import { longTimeouts, provideDatabase, runMigrations } from './database/database.js';

export const JSON_BODY_LIMIT = 1_048_576;
/** The largest file a multipart upload may carry (an avatar: 2 MiB). */
export const UPLOAD_FILE_LIMIT = 2_097_152;
const SHUTDOWN_GRACE_MS = 10_000;
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the Nest application on Fastify with every global behaviour; used by main.ts and the tests alike. */
export async function createApp(config: ResolvedConfig, logger: Logger): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    loggerInstance: logger,
    // One line per request, written when it completes (below), so that it can name the caller.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: JSON_BODY_LIMIT,
    // Long enough that an oversized path id is answered as a 400 by its pipe, not as an unknown route: Node
    // refuses a request line over its 16 KiB header limit before the router could see a longer one.
    routerOptions: { maxParamLength: 16_384 },
    // What the router answers by itself (a malformed URL, a parameter over that length) stays in the envelope.
    frameworkErrors: answerFrameworkError,
    forceCloseConnections: 'idle',
    // The whole request, head and body, must arrive within REQUEST_TIMEOUT_MS: a trickling client is cut off.
    ...requestTimeoutOptions(config.requestTimeoutMs),
    // Off unless TRUST_PROXY names the proxies: a client then cannot choose its own address. Fastify trusts
    // no one for a bare number (it cannot check the peer), so a hop count is the proxy-addr function for it.
    trustProxy:
      typeof config.trustProxy === 'number'
        ? (
            (hops: number) => (_address: string, hop: number) =>
              hop < hops
          )(config.trustProxy)
        : config.trustProxy,
    // A well-formed X-Request-Id from a proxy is kept so logs correlate; anything else gets a fresh id.
    genReqId: (request: IncomingMessage) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), adapter, {
    logger: new NestPinoLogger(logger),
    abortOnError: false,
    // Fastify's own JSON parser only: Nest would add a urlencoded one, and JSON routes accept JSON alone.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance();
  // JSON routes accept JSON only: anything else (text/plain included) is 415 Unsupported content type.
  fastify.removeContentTypeParser('text/plain');
  // CSV imports stream their text/csv body; every other route keeps answering 415 to it.
  registerCsvBodyParser(fastify);
  // SCIM's own media type, taken only by the SCIM routes (docs/api.md §14).
  registerScimJsonParser(fastify);
  // Multipart bodies are streamed by the handler, so bodyLimit (JSON only) does not cut them; busboy stops
  // each file at UPLOAD_FILE_LIMIT (marking it truncated) and the handler answers 413 itself.
  await app.register(fastifyMultipart, {
    throwFileSizeLimit: false,
    limits: { fileSize: UPLOAD_FILE_LIMIT, files: 2, parts: 100, fieldSize: 65_536 },
  });
  // The Fastify plumbing under the Nest pipeline (src/http), in the order its hooks run.
  await app.register(requestId);
  await app.register(drainEarlyAnswers);
  await app.register(answerRequestTimeouts);
  await app.register(boundJsonBodies);
  // A CSV body with an Idempotency-Key is hashed before its handler streams it (docs/api.md §17).
  await app.register(hashStreamedBodies);
  await app.register(requestLog);
  // Before any route exists, so that every route (docs included) gets its headers.
  await app.register(securityHeaders, { overrides: docsRouteHeaders(docsSignIn(config)) });
  app.get(Metrics).instrument(fastify);
  app.setGlobalPrefix('api');
  if (config.swaggerEnabled)
    setupOpenApi(app, docsSignIn(config), config.scimEnabled ? scimOpenApi : undefined);
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
      // Request headers are allowed as the preflight names them (If-Match, Idempotency-Key, …); these are read.
      exposedHeaders: ['ETag', 'Link', 'Idempotent-Replayed', 'X-Request-Id'],
    });
  }
  return app;
}

export interface RunningService {
  app: NestFastifyApplication;
  /** Base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  logger: Logger;
  /** Stops accepting, finishes in-flight requests (up to 10 s), closes the pool, then stops an embedded database. */
  close(): Promise<void>;
}

/** Database, migrations, secret, application, listening socket: the whole start of the service. */
export async function startService(config: AppConfig): Promise<RunningService> {
  const logger = createRootLogger(config.logLevel);
  const log = { log: (m: string) => logger.info(m), error: (m: string) => logger.error(m) };
  // First: a stored secret that is unusable stops the start before a database is started.
  const jwtSecret = await resolveJwtSecret(config.jwtSecret, config.dataDir);
  const database = await provideDatabase(config.databaseUrl, config.dataDir, log);
  let app: NestFastifyApplication | undefined;
  try {
    const applied = await runMigrations(database.url, longTimeouts(config));
    if (applied.length > 0) logger.info({ migrations: applied }, 'Applied migrations');
    app = await createApp({ ...config, databaseUrl: database.url, jwtSecret }, logger);
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app?.close().catch(() => undefined);
    await database.stop();
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const running = app;
  let closing: Promise<void> | undefined;
  return {
    app: running,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    logger,
    close: () =>
      (closing ??= (async () => {
        // Long-polls answer now rather than hold the close below until the grace period ends.
        running.get(Draining).begin();
        const fastify = running.getHttpAdapter().getInstance();
        // close() reaps the keep-alive sockets idle at that moment only; one whose response was still being
        // written goes idle later and would hold the server open until its keep-alive timeout.
        const reaper = setInterval(() => fastify.server.closeIdleConnections(), 50);
        // Fastify stops accepting at once and resolves when in-flight requests are done.
        await Promise.race([
          fastify.close(),
          new Promise((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref()),
        ]);
        clearInterval(reaper);
        fastify.server.closeAllConnections();
        await running.close();
        await database.stop();
      })()),
  };
}
