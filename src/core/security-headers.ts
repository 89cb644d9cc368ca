import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DOCS_PATH } from './openapi.setup.js';

/**
 * The API only ever answers JSON or image bytes, so its pages may load nothing, be framed by nobody and submit
 * nowhere. `useDefaults: false` also drops helmet's `upgrade-insecure-requests`, which would break plain-HTTP
 * deployments of the docs.
 */
export const API_CSP = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'none'"],
    frameAncestors: ["'none'"],
  },
};

/**
 * Swagger UI (`/api/docs`, its assets and init script) is a same-origin single-page app: its scripts, stylesheet
 * and init script come from `/api/docs/` (no inline script or style, no eval), its stylesheet draws icons with
 * `data:` SVGs, an image response of "Try it out" (an avatar) is shown from a `blob:` URL, and "Try it out"
 * calls the API on the same origin. React sets inline styles through the CSSOM, which CSP does not restrict.
 */
export const DOCS_CSP = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:', 'blob:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
};

/** Swagger UI's page and static assets (not the JSON document, which is plain data and keeps the API policy). */
export function isDocsUiRoute(url: string): boolean {
  return url === DOCS_PATH || url.startsWith(`${DOCS_PATH}/`);
}

/**
 * Registers `@fastify/helmet` with the strict policy everywhere and the relaxed one on the docs UI routes only.
 * Call before any route is added (before the docs are set up and before `init`/`listen`).
 */
export async function registerSecurityHeaders(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRoute', (route) => {
    if (isDocsUiRoute(route.url)) {
      route.config = { ...route.config, helmet: { contentSecurityPolicy: DOCS_CSP } } as typeof route.config;
    }
  });
  const options: FastifyHelmetOptions = {
    global: true,
    contentSecurityPolicy: API_CSP,
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  };
  await app.register(helmet, options);
}
