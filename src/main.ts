import 'reflect-metadata';
import { ConfigError, loadConfig } from './config/app-config.js';
import { applyV8Flags } from './core/v8-tuning.js';

applyV8Flags();

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  // Loaded after the configuration is known to be good, so a bad setting fails at once.
  const { startService } = await import('./app.js');
  const { releaseShutdownSignals } = await import('./database/embedded-postgres.js');
  const service = await startService(config);
  service.logger.info(`Module administration service listening on ${service.url}/api`);
  if (config.swaggerEnabled) service.logger.info(`API documentation at ${service.url}/api/docs`);

  // The last line of defence: background work (webhook deliveries, the feed's listener, retention) handles its
  // own failures; one that still escapes as a rejection is logged, and the process keeps serving instead of
  // exiting, which a restart would only repeat (docs/webhooks.md, "Faults").
  process.on('unhandledRejection', (reason: unknown) => {
    service.logger.error(
      { err: reason },
      'Unhandled rejection in background work (the service keeps running)',
    );
  });
  releaseShutdownSignals();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      service.logger.info(`${signal} received: shutting down`);
      service.close().then(
        () => process.exit(0),
        (error: unknown) => {
          service.logger.error({ err: error }, 'Shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}

main().catch(async (error: unknown) => {
  const { StartupError } = await import('./database/postgres-user-access.js');
  const { StoredSecretError } = await import('./config/secret-file.js');
  if (error instanceof StoredSecretError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
  if (error instanceof StartupError) {
    // Says what is wrong and what to do; a stack trace would only hide that.
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
