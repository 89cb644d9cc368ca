import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import helmet, { type HelmetOptions } from 'helmet';

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

export const COMMON_HELMET_OPTIONS: HelmetOptions = {
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
};

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

const API_HEADERS = helmetHeaders({ ...COMMON_HELMET_OPTIONS, contentSecurityPolicy: API_CSP });

/** Headers for the routes whose policy differs from the API's (the docs UI): undefined keeps the API's. */
export type RouteHeaders = (route: string) => Readonly<Record<string, string>> | undefined;

/**
 * Sends helmet's headers with the strict policy on every answer (unknown routes and errors included) and, on the
 * routes `overrides` names (the docs UI, openapi/docs-headers.ts), theirs. Call before any route is added (before
 * the docs are set up and before `init`/`listen`). `@fastify/helmet` would build a helmet instance on every
 * request; the headers depend on the route alone, so they are computed once per route (docs/decisions.md).
 */
export function registerSecurityHeaders(app: NestFastifyApplication, overrides?: RouteHeaders): void {
  const fastify = app.getHttpAdapter().getInstance();
  const byRoute = new Map<string, Readonly<Record<string, string>>>();
  if (overrides) {
    fastify.addHook('onRoute', (route) => {
      const headers = overrides(route.url);
      if (headers) byRoute.set(route.url, headers);
    });
  }
  fastify.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    void reply.headers((route !== undefined && byRoute.get(route)) || API_HEADERS);
    done();
  });
}
