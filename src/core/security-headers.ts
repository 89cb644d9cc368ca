import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { type DocsSignIn, DOCS_PATH, OAUTH2_REDIRECT_PATH } from './openapi.setup.js';

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

const COMMON: HelmetOptions = {
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
};

/** Swagger UI's page and static assets (not the JSON document, which is plain data and keeps the API policy). */
export function isDocsUiRoute(url: string): boolean {
  return url === DOCS_PATH || url.startsWith(`${DOCS_PATH}/`);
}

/**
 * The headers helmet sets for these options. None of the options depends on the request (no nonces), so helmet
 * runs once here against a response that only records what is set; every answer then gets the recorded headers.
 */
export function helmetHeaders(options: HelmetOptions): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let done = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error as Error;
    done = true;
  });
  if (!done) throw new Error('helmet did not finish synchronously');
  return Object.freeze(headers);
}

export const API_HEADERS = helmetHeaders({ ...COMMON, contentSecurityPolicy: API_CSP });
export const DOCS_HEADERS = helmetHeaders({ ...COMMON, contentSecurityPolicy: DOCS_CSP });

/**
 * The docs headers when the console signs in through the identity provider (docs/sso.md), relaxed for the
 * IdP's origin only: the page fetches the IdP's discovery document and redeems the code at its token endpoint
 * (`connect-src`), and opens the IdP's sign-in page in a popup that must still reach back to it
 * (`Cross-Origin-Opener-Policy: same-origin-allow-popups`). The redirect page the popup ends on has no COOP, or
 * the browser would cut it off from the page that opened it.
 */
export function docsHeaders(signIn: DocsSignIn | undefined): {
  page: Readonly<Record<string, string>>;
  redirect: Readonly<Record<string, string>>;
} {
  if (!signIn?.sso) return { page: DOCS_HEADERS, redirect: DOCS_HEADERS };
  const idpOrigin = new URL(signIn.sso.issuer).origin;
  const csp = {
    ...DOCS_CSP,
    directives: { ...DOCS_CSP.directives, connectSrc: ["'self'", idpOrigin] },
  };
  return {
    page: helmetHeaders({
      ...COMMON,
      contentSecurityPolicy: csp,
      crossOriginOpenerPolicy: { policy: 'same-origin-allow-popups' },
    }),
    redirect: helmetHeaders({ ...COMMON, contentSecurityPolicy: csp, crossOriginOpenerPolicy: false }),
  };
}

/**
 * Sends helmet's headers with the strict policy on every answer (unknown routes and errors included) and the
 * relaxed one on the docs UI routes only. Call before any route is added (before the docs are set up and before
 * `init`/`listen`). `@fastify/helmet` would build a helmet instance on every request; the headers depend on the
 * route alone, so they are computed once (docs/decisions.md).
 */
export function registerSecurityHeaders(app: NestFastifyApplication, signIn?: DocsSignIn): void {
  const docs = docsHeaders(signIn);
  const fastify = app.getHttpAdapter().getInstance();
  const docsRoutes = new Set<string>();
  fastify.addHook('onRoute', (route) => {
    if (isDocsUiRoute(route.url)) docsRoutes.add(route.url);
  });
  fastify.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    const headers =
      route === undefined || !docsRoutes.has(route)
        ? API_HEADERS
        : route === OAUTH2_REDIRECT_PATH
          ? docs.redirect
          : docs.page;
    void reply.headers(headers);
    done();
  });
}
