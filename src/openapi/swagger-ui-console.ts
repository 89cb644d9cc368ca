import { INVALID_TOKEN_MESSAGE } from '../core/errors.js';

/**
 * The browser side of "sign in once" for Swagger UI, served as the static script `/api/docs/admin-console.js`
 * (the docs policy allows scripts from `'self'` only: no inline script, no eval). It is plain ES2017 for the
 * browser, kept here as text because the `tsc` build copies only TypeScript into `dist/`.
 *
 * - `window.AdminConsole.responseInterceptor` (set as Swagger UI's `responseInterceptor` by the init script):
 *   a successful `POST /api/auth/login` or `PUT /api/auth/password` authorizes the page with the token of the
 *   answer (`authorizeWithPersistOption`, so `persistAuthorization` keeps it across reloads in local storage);
 *   a 401 `Invalid or expired token` to a request made with it signs the page out.
 * - `window.AdminConsole.plugin` (a Swagger UI plugin): after every change of the authorization (sign-in, the
 *   Authorize dialog, the restore from local storage on load) it signs out a token that has expired, sets a
 *   timer that signs out when the current token expires (its `exp` claim), and keeps the line in
 *   `#session-status` saying who is signed in until when, or that the page is signed out and why.
 *
 * - Single sign-on (docs/sso.md): when the document carries the `sso` scheme (openIdConnect), the status line
 *   offers "Sign in with <IdP>", which opens Swagger UI's Authorize dialog; its authorization-code + PKCE flow
 *   (initOAuth in the init script) ends on `/api/docs/oauth2-redirect.html` and authorizes the page with the IdP's
 *   access token, which is followed like a password sign-in's token. `GET /api/auth/config` tells whether the
 *   password hint is shown. The IdP's refresh and ID tokens are dropped before they reach Swagger UI's state
 *   (and so local storage): the page keeps the access token alone.
 *
 * The token is never written to a URL, the console or the status line; only the username is kept beside it.
 */
export const ADMIN_CONSOLE_SCRIPT = `(function () {
  'use strict';
  var SCHEME = 'bearer';
  var SSO = 'sso';
  var passwordLogin = true;
  var SIGN_IN = /\\/api\\/auth\\/(login|password)$/;
  var USER_KEY = 'admin-console.username';
  var LOGIN_HINT = 'Run Auth \\u2192 POST /api/auth/login (Execute) to sign in.';
  var SSO_HINT = 'Sign in through the identity provider (Authorize).';
  var ui = null;
  var timer = null;
  var signedOutBecause = '';

  function claims(token) {
    try {
      var part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      return JSON.parse(atob(part + '==='.slice((part.length + 3) % 4)));
    } catch (error) {
      return null;
    }
  }

  function expiry(token) {
    var payload = claims(token);
    return payload && typeof payload.exp === 'number' ? payload.exp * 1000 : 0;
  }

  /** The IdP's openIdConnect scheme of the document, or null when the console does not sign in through one. */
  function ssoScheme() {
    var definition = ui && ui.specSelectors.specJson().getIn(['components', 'securitySchemes', SSO]);
    return definition ? definition.toJS() : null;
  }

  function ssoToken() {
    var authorized = ui && ui.authSelectors.authorized();
    var entry = authorized && authorized.get(SSO);
    var value = entry && entry.getIn(['token', 'access_token']);
    return typeof value === 'string' && value !== '' ? value : null;
  }

  function currentToken() {
    var authorized = ui && ui.authSelectors.authorized();
    var entry = authorized && authorized.get(SCHEME);
    var value = entry && entry.get('value');
    return typeof value === 'string' && value !== '' ? value : ssoToken();
  }

  function show(state, text) {
    var element = document.getElementById('session-status');
    if (!element) return;
    element.className = 'session-status session-status--' + state;
    element.textContent = text;
    var scheme = state === 'signed-out' ? ssoScheme() : null;
    if (scheme) {
      var button = document.createElement('button');
      button.type = 'button';
      button.className = 'session-status__sign-in';
      button.textContent = 'Sign in with ' + new URL(scheme.openIdConnectUrl).host;
      button.addEventListener('click', function () {
        var authorize = document.querySelector('.auth-wrapper .authorize');
        if (authorize) authorize.click();
      });
      element.appendChild(document.createTextNode(' '));
      element.appendChild(button);
    }
  }

  function signOut(reason) {
    signedOutBecause = reason;
    // Only the schemes that hold a token: Swagger UI's logout fails on a name the document does not define
    // (the sso scheme exists only with OIDC_CLIENT_ID).
    var authorized = ui.authSelectors.authorized();
    var held = [SCHEME, SSO].filter(function (name) {
      return authorized && authorized.get(name);
    });
    if (held.length > 0) ui.authActions.logoutWithPersistOption(held);
    else watch();
  }

  /** Brings the status line and the expiry timer in line with the page's current authorization. */
  function watch() {
    if (timer) clearTimeout(timer);
    timer = null;
    var token = currentToken();
    if (!token) {
      localStorage.removeItem(USER_KEY);
      var hint = ssoScheme() ? (passwordLogin ? SSO_HINT + ' Or: ' + LOGIN_HINT : SSO_HINT) : LOGIN_HINT;
      show('signed-out', (signedOutBecause ? 'Signed out: ' + signedOutBecause + '. ' : 'Not signed in. ') + hint);
      return;
    }
    var expires = expiry(token);
    var left = expires - Date.now();
    if (left <= 0) {
      signOut('the session expired');
      return;
    }
    signedOutBecause = '';
    var payload = token === ssoToken() ? claims(token) || {} : {};
    var who =
      (token === ssoToken() ? payload.preferred_username || payload.email || payload.sub : localStorage.getItem(USER_KEY)) ||
      'the token\u2019s user';
    show('signed-in', 'Signed in as ' + who + ' until ' + new Date(expires).toLocaleTimeString() + '.');
    // setTimeout takes at most 2^31-1 ms; a longer-lived token is looked at again then.
    timer = setTimeout(watch, Math.min(left + 250, 2147483647));
  }

  function signIn(token, username) {
    var definition = ui.specSelectors.specJson().getIn(['components', 'securitySchemes', SCHEME]);
    if (!definition) return;
    if (username) localStorage.setItem(USER_KEY, username);
    else localStorage.removeItem(USER_KEY);
    var authorization = {};
    authorization[SCHEME] = { name: SCHEME, schema: definition.toJS(), value: token };
    ui.authActions.authorizeWithPersistOption(authorization);
  }

  function responseInterceptor(response) {
    try {
      if (ui && response) {
        var path = new URL(response.url, location.href).pathname;
        var body = response.body;
        var data = body && body.success === true ? body.data : null;
        if (response.status === 200 && SIGN_IN.test(path) && data && typeof data.token === 'string') {
          signIn(data.token, data.user && data.user.username);
        } else if (response.status === 401 && body && body.message === '${INVALID_TOKEN_MESSAGE}' && currentToken()) {
          signOut('the service refused the token (it expired, or the password changed)');
        }
      }
    } catch (error) {
      // Never break "Try it out" over the status line.
    }
    return response;
  }

  /** Re-reads the authorization after every change to it: sign-in, Authorize/Logout, restore on load. */
  function afterAuthChange(action) {
    return function () {
      var result = action.apply(null, arguments);
      setTimeout(watch, 0);
      return result;
    };
  }

  /**
   * The IdP's answer keeps only what the page uses, the access token: its refresh token and ID token never reach
   * Swagger UI's state, so persistAuthorization never writes them to local storage (docs/security.md).
   */
  function accessTokenOnly(action) {
    var followed = afterAuthChange(action);
    return function (authorization) {
      var token = authorization && authorization.token;
      if (!token) return followed.apply(null, arguments);
      var kept = { access_token: token.access_token, token_type: token.token_type, expires_in: token.expires_in };
      return followed(Object.assign({}, authorization, { token: kept }));
    };
  }

  /** The Swagger UI plugin: keeps hold of the UI and follows its authorization. */
  function plugin() {
    return {
      afterLoad: function (system) {
        ui = system;
        setTimeout(watch, 0);
        // Whether password sign-in is on (PASSWORD_LOGIN), for the hint.
        fetch(location.origin + '/api/auth/config')
          .then(function (response) { return response.json(); })
          .then(function (body) {
            if (body && body.success && body.data) passwordLogin = body.data.password_login !== false;
            watch();
          })
          .catch(function () {});
      },
      statePlugins: {
        auth: {
          wrapActions: {
            authorize: afterAuthChange,
            // The IdP's token arrives through this one (authorization code + PKCE, docs/sso.md).
            authorizeOauth2: accessTokenOnly,
            logout: afterAuthChange,
            restoreAuthorization: afterAuthChange,
          },
        },
      },
    };
  }

  // Another tab signing in or out changes local storage; follow it.
  window.addEventListener('storage', function (event) {
    if (!ui || event.key !== 'authorized') return;
    var stored = event.newValue ? JSON.parse(event.newValue) : null;
    if (stored && stored[SCHEME]) ui.authActions.restoreAuthorization({ authorized: stored });
    else if (currentToken()) ui.authActions.logout([SCHEME]);
  });

  window.AdminConsole = { plugin: plugin, responseInterceptor: responseInterceptor };
})();
`;

/** Styles for the status line above the UI (the docs policy allows stylesheets from `'self'` only). */
export const ADMIN_CONSOLE_CSS = `.session-status {
  position: sticky;
  top: 0;
  z-index: 10;
  box-sizing: border-box;
  max-width: 1460px;
  margin: 0 auto;
  padding: 8px 20px;
  border-radius: 4px;
  font-family: sans-serif;
  font-size: 14px;
}
.session-status--signed-in {
  background: #e8f6ee;
  color: #1d5b37;
}
.session-status--signed-out {
  background: #fdf1e6;
  color: #7a3f00;
}
.session-status__sign-in {
  margin-left: 8px;
  padding: 4px 12px;
  border: 1px solid #49cc90;
  border-radius: 4px;
  background: #fff;
  color: #1d5b37;
  font-weight: bold;
  cursor: pointer;
}
`;
