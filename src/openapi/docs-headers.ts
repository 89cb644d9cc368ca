import { COMMON_HELMET_OPTIONS, helmetHeaders, type RouteHeaders } from '../http/security-headers.js';
import { type DocsSignIn, DOCS_PATH, OAUTH2_REDIRECT_PATH } from './setup.js';

/**
 * Swagger UI (`/api/docs`, its assets and init script) is a same-origin single-page app: its scripts, stylesheet
 * and init script come from `/api/docs/` (no inline script or style, no eval), its stylesheet draws icons with
 * `data:` SVGs, an image response of "Try it out" (an avatar) is shown from a `blob:` URL, and "Try it out"
 * calls the API on the same origin. React sets inline styles through the CSSOM, which CSP does not restrict.
 */
const DOCS_CSP = {
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
function isDocsUiRoute(url: string): boolean {
  return url === DOCS_PATH || url.startsWith(`${DOCS_PATH}/`);
}

const DOCS_HEADERS = helmetHeaders({ ...COMMON_HELMET_OPTIONS, contentSecurityPolicy: DOCS_CSP });

/**
 * The docs headers when the console signs in through the identity provider (docs/sso.md), relaxed for the
 * IdP's origin only: the page fetches the IdP's discovery document and redeems the code at its token endpoint
 * (`connect-src`), and opens the IdP's sign-in page in a popup that must still reach back to it
 * (`Cross-Origin-Opener-Policy: same-origin-allow-popups`). The redirect page the popup ends on has no COOP, or
 * the browser would cut it off from the page that opened it.
 */
function docsHeaders(signIn: DocsSignIn | undefined): {
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
      ...COMMON_HELMET_OPTIONS,
      contentSecurityPolicy: csp,
      crossOriginOpenerPolicy: { policy: 'same-origin-allow-popups' },
    }),
    redirect: helmetHeaders({
      ...COMMON_HELMET_OPTIONS,
      contentSecurityPolicy: csp,
      crossOriginOpenerPolicy: false,
    }),
  };
}

/** The headers of the docs UI routes (page, assets, the sign-in redirect page); other routes keep the API's. */
export function docsRouteHeaders(signIn: DocsSignIn | undefined): RouteHeaders {
  const docs = docsHeaders(signIn);
  return (route) => {
    if (!isDocsUiRoute(route)) return undefined;
    return route === OAUTH2_REDIRECT_PATH ? docs.redirect : docs.page;
  };
}
