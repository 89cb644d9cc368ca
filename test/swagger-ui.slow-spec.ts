import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from './support/app.js';
import { decodeJwt } from 'jose';
import { ModuleRole } from '../src/course-modules/modules/module-role.js';
import { assignRole, DEFAULT_PASSWORD, makeModule, makeUser, tokenFor } from './support/factories.js';
import { CONSOLE_CLIENT_ID, TEST_AUDIENCE, TestIdp } from './support/idp.js';
import { client } from './support/http.js';
import { multipartBody, TINY_PNG } from './support/openapi-requests.js';
import { chromiumRequirement, describeWhenAvailable } from './support/requires.js';

/** Debian's chromium (.ci/install-chromium.sh); never a browser that Playwright downloads. */
const browser = chromiumRequirement();
const SCREENSHOT = path.resolve('docs/images/swagger-ui.png');
const TRY_PATH = '/api/modules';
const CONSOLE_SCREENSHOT = path.resolve('docs/images/swagger-ui-console.png');
const SSO_SCREENSHOT = path.resolve('docs/images/swagger-ui-sso.png');

/**
 * Headless Chromium on the profile `userDataDir`, and its page: CSP violations, console errors and page errors
 * are collected in `problems`, which the tests expect to stay empty.
 */
async function openBrowser(
  userDataDir: string,
  problems: string[],
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: browser.found,
    headless: true,
    viewport: { width: 1280, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--no-first-run',
    ],
  });
  context.setDefaultTimeout(15_000);
  const page = context.pages()[0] ?? (await context.newPage());
  // CSP violations surface as console errors and as events; either fails the test.
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
        console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI);
      });`,
  });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { context, page };
}

describeWhenAvailable(browser, 'Swagger UI in a real browser', () => {
  let app: TestApp;
  let userDataDir: string;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const requestedUrls: string[] = [];
  /** The signed-in admin of the first test, still authorized in the page for the second. */
  const session = { token: '' };

  beforeAll(async () => {
    app = await startTestApp();
    userDataDir = await mkdtemp(path.join(tmpdir(), 'mas-chromium-'));
    ({ context, page } = await openBrowser(userDataDir, problems));
    page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
    page.on('request', (request) => requestedUrls.push(request.url()));
  });

  afterAll(async () => {
    await context?.close();
    await rm(userDataDir, { recursive: true, force: true });
    await app?.close();
  });

  it('authorizes with a real token, runs "Try it out" on GET /api/modules and shows the 200 response', async () => {
    await app.reset();
    const admin = await makeUser(app.dataSource, { username: 'admin', admin: true });
    await makeModule(app.dataSource, {
      code: 'CSC101',
      year: 2026,
      description: 'Introduction to Computing',
    });
    await makeModule(app.dataSource, { code: 'MTH201', year: 2026, description: 'Linear Algebra' });
    const login = await client(app.url).post('/api/auth/login', {
      body: { username: admin.username, password: DEFAULT_PASSWORD },
    });
    expect(login.status).toBe(200);
    const token = login.body.data.token as string;
    session.token = token;

    const response = await page.goto(`${app.url}/api/docs`);
    expect(response?.status()).toBe(200);
    await page.locator('.swagger-ui .info .title').getByText('Module Administration Service').waitFor();

    // Authorize: the bearer scheme's dialog takes the token.
    await page.locator('.swagger-ui .auth-wrapper button.authorize').click();
    const dialog = page.locator('.swagger-ui .dialog-ux .modal-ux');
    await dialog.locator('input[type="text"], input[type="password"]').first().fill(token);
    await dialog.locator('.auth-btn-wrapper button.authorize').click();
    await dialog.locator('button.btn-done').click();
    await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').waitFor();

    // Try it out → Execute on the operation.
    const operation = page
      .locator('.swagger-ui .opblock.opblock-get')
      .filter({ has: page.locator(`.opblock-summary-path[data-path="${TRY_PATH}"]`) });
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('button.execute').click();

    const live = operation.locator('.responses-wrapper .live-responses-table');
    await live.locator('.response-col_status').getByText('200', { exact: true }).waitFor();
    const body = await live.locator('.response-col_description pre').first().innerText();
    expect(JSON.parse(body)).toMatchObject({ success: true, message: 'Modules retrieved successfully' });
    expect(body).toContain('CSC101');
    expect(await operation.locator('.curl-command').innerText()).toContain(`Authorization: Bearer ${token}`);

    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await operation.scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT, fullPage: false });

    // The schemas section renders too (more of the UI under the same policy).
    const moduleModel = page.locator('.swagger-ui section.models #model-Module');
    await moduleModel.locator('.model-box-control').first().click();
    await moduleModel.getByText('created_at').first().waitFor();

    expect(problems).toEqual([]);
  });

  it('shows an avatar answered by "Try it out" as an image (a blob: URL the docs policy allows)', async () => {
    const me = await client(app.url).get('/api/auth/me', { token: session.token });
    const { body, contentType } = multipartBody();
    const upload = await fetch(`${app.url}/api/users/${me.body.data.id}/avatar`, {
      method: 'PUT',
      body,
      headers: { 'content-type': contentType, authorization: `Bearer ${session.token}` },
    });
    expect(upload.status).toBe(200);

    const operation = page
      .locator('.swagger-ui .opblock.opblock-get')
      .filter({ has: page.locator('.opblock-summary-path[data-path="/api/users/{user_id}/avatar"]') });
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('input[placeholder="user_id"]').fill(String(me.body.data.id));
    await operation.locator('button.execute').click();

    const live = operation.locator('.responses-wrapper .live-responses-table');
    await live.locator('.response-col_status').getByText('200', { exact: true }).waitFor();
    const image = live.locator('.response-col_description img').first();
    await image.waitFor();
    expect(await image.getAttribute('src')).toMatch(/^blob:/);
    // Decoded and drawn: naturalWidth stays 0 for an image the policy blocked.
    let width: unknown = 0;
    for (let tries = 0; tries < 50 && width !== 1; tries++) {
      width = await image.evaluate((img: { complete: boolean; naturalWidth: number }) =>
        img.complete ? img.naturalWidth : 0,
      );
      if (width !== 1) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(width).toBe(1);
    expect(problems).toEqual([]);
  });
  /** The operation block of `method path`, expanded (Try it out is on by default, so its inputs are ready). */
  async function openOperation(method: string, apiPath: string) {
    const operation = page
      .locator(`.swagger-ui .opblock.opblock-${method}`)
      .filter({ has: page.locator(`.opblock-summary-path[data-path="${apiPath}"]`) });
    if (!(await operation.locator('.opblock-body').isVisible())) {
      await operation.locator('.opblock-summary').first().click();
    }
    await operation.locator('button.execute').waitFor();
    return operation;
  }

  /** Fills the path parameters and JSON body (when given), presses Execute and returns the live response. */
  async function execute(
    method: string,
    apiPath: string,
    input: { params?: Record<string, string | number>; body?: unknown } = {},
  ) {
    const operation = await openOperation(method, apiPath);
    for (const [name, value] of Object.entries(input.params ?? {})) {
      await operation.locator(`input[placeholder="${name}"]`).fill(String(value));
    }
    if (input.body !== undefined) {
      await operation.locator('textarea.body-param__text').fill(JSON.stringify(input.body));
    }
    const clear = operation.locator('button.btn-clear');
    if (await clear.isVisible()) await clear.click();
    await operation.locator('button.execute').click();
    const live = operation.locator('.responses-wrapper .live-responses-table');
    const status = live.locator('tr.response .response-col_status').first();
    await status.waitFor();
    const text = await live.locator('.response-col_description pre').first().innerText();
    return { operation, status: Number((await status.innerText()).trim()), body: JSON.parse(text) };
  }

  const statusLine = () => page.locator('#session-status');
  /** The page's local storage (the evaluated callbacks run in the browser, which the Node types do not know). */
  interface BrowserGlobals {
    localStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  }
  const storedToken = () =>
    page.evaluate(() => {
      const stored = JSON.parse(
        (globalThis as unknown as BrowserGlobals).localStorage.getItem('authorized') ?? '{}',
      ) as {
        bearer?: { value?: string };
      };
      return stored.bearer?.value ?? null;
    });

  it('signs in once: Login run on the page authorizes it, then a module, an enrolment and a read work, also after a reload', async () => {
    await app.reset();
    await makeUser(app.dataSource, { username: 'admin', admin: true });
    const student = await makeUser(app.dataSource, { username: 'sjones' });
    problems.length = 0;

    // A fresh browser profile as far as the page is concerned.
    await page.goto(`${app.url}/api/docs`);
    await page.evaluate('localStorage.clear()');
    await page.waitForLoadState('networkidle');
    await page.reload();
    await statusLine().getByText('Not signed in.').waitFor();
    expect(await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').count()).toBe(0);
    // The operation filter box is there.
    await page.locator('.swagger-ui .filter-container input.operation-filter-input').waitFor();

    // 1. Log in: nothing to copy or paste.
    const login = await execute('post', '/api/auth/login', {
      body: { username: 'admin', password: DEFAULT_PASSWORD },
    });
    expect(login.status).toBe(200);
    await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').waitFor();
    await statusLine()
      .getByText(/^Signed in as admin until /)
      .waitFor();
    expect(await storedToken()).toBe(login.body.data.token);
    // The request duration is shown.
    await login.operation.locator('h5').getByText('Request duration').waitFor();
    await login.operation
      .locator('pre.microlight')
      .filter({ hasText: /^\d+ ms$/ })
      .waitFor();

    // 2. Work: the example body of POST /api/modules as the page offers it.
    const created = await execute('post', '/api/modules');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ success: true, message: 'Module created successfully' });
    const moduleId = created.body.data.id as number;

    const enrolled = await execute('post', '/api/modules/{module_id}/students', {
      params: { module_id: moduleId },
      body: { user_ids: [student.id] },
    });
    expect(enrolled.status).toBe(200);
    expect(enrolled.body).toMatchObject({ success: true, data: { enrolled: 1 } });

    const read = await execute('get', '/api/modules/{module_id}', { params: { module_id: moduleId } });
    expect(read.status).toBe(200);
    expect(read.body.data.students.map((user: { username: string }) => user.username)).toEqual(['sjones']);

    // Files from the page: the avatar upload offers a file chooser (multipart, format binary).
    const avatar = await openOperation('put', '/api/users/{user_id}/avatar');
    await avatar.locator('input[placeholder="user_id"]').fill(String(student.id));
    await avatar
      .locator('input[type="file"]')
      .setInputFiles({ name: 'avatar.png', mimeType: 'image/png', buffer: TINY_PNG });
    const uploaded = await execute('put', '/api/users/{user_id}/avatar');
    expect(uploaded.status).toBe(200);
    expect(uploaded.body.data).toMatchObject({
      username: 'sjones',
      avatar_url: `/api/users/${student.id}/avatar`,
    });

    // 3. A reload keeps the page signed in.
    await page.waitForLoadState('networkidle');
    await page.reload();
    await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').waitFor();
    await statusLine()
      .getByText(/^Signed in as admin until /)
      .waitFor();
    const me = await execute('get', '/api/auth/me');
    expect(me.status).toBe(200);
    expect(me.body.data.username).toBe('admin');

    // The token went into no URL the page requested.
    const token = login.body.data.token as string;
    expect(requestedUrls.some((url) => url.includes(token))).toBe(false);

    // The README's picture: the module read after the reload, the status line on top (sticky), no token shown.
    await me.operation.locator('.opblock-summary').first().click();
    const again = await execute('get', '/api/modules/{module_id}', { params: { module_id: moduleId } });
    expect(again.status).toBe(200);
    await again.operation
      .locator('.live-responses-table .response-col_description pre')
      .first()
      .scrollIntoViewIfNeeded();
    await mkdir(path.dirname(CONSOLE_SCREENSHOT), { recursive: true });
    await page.screenshot({
      path: CONSOLE_SCREENSHOT,
      fullPage: false,
      // The curl command carries the token: blanked out in the picture.
      mask: [page.locator('.swagger-ui .curl-command')],
      maskColor: '#333',
    });
    expect(problems).toEqual([]);
  });

  it('signs the page out when its token expires, and says so', async () => {
    const admin = (
      await app.dataSource.query<{ id: number }[]>(`SELECT id FROM users WHERE username = 'admin'`)
    )[0];
    const shortLived = tokenFor({ id: Number(admin.id), admin: true }, { expiresIn: 4 });
    await page.evaluate((value) => {
      const stored = JSON.parse(
        (globalThis as unknown as BrowserGlobals).localStorage.getItem('authorized') ?? '{}',
      ) as Record<string, { value: string }>;
      stored.bearer.value = value;
      (globalThis as unknown as BrowserGlobals).localStorage.setItem('authorized', JSON.stringify(stored));
    }, shortLived);
    await page.waitForLoadState('networkidle');
    await page.reload();
    await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').waitFor();

    await statusLine().getByText('Signed out: the session expired.').waitFor({ timeout: 10_000 });
    expect(await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').count()).toBe(0);
    expect(await storedToken()).toBeNull();

    // A reload does not bring it back.
    await page.waitForLoadState('networkidle');
    await page.reload();
    await statusLine().getByText('Not signed in.').waitFor();
    expect(await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').count()).toBe(0);
    expect(problems).toEqual([]);
  });
});

describeWhenAvailable(browser, 'Swagger UI signing in through the identity provider (docs/sso.md)', () => {
  let idp: TestIdp;
  let app: TestApp;
  let userDataDir: string;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    idp = await TestIdp.start();
    idp.accounts.set('ada.lovelace', { preferred_username: 'ada.lovelace', email: 'ada@example.edu' });
    app = await startTestApp({
      oidc: {
        issuer: idp.issuer,
        audience: TEST_AUDIENCE,
        usernameClaim: 'preferred_username',
        createUsers: false,
        clientId: CONSOLE_CLIENT_ID,
        scopes: ['openid', 'profile', 'email'],
        maxTokenAgeS: 86_400,
        refetchCooldownMs: 30_000,
      },
    });
    userDataDir = await mkdtemp(path.join(tmpdir(), 'mas-chromium-sso-'));
    ({ context, page } = await openBrowser(userDataDir, problems));
  });

  afterAll(async () => {
    await context?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
    await app?.close();
    await idp?.stop();
  });

  it("signs in on the IdP's own login form, comes back authorized and runs GET /api/modules/me as that person", async () => {
    await app.reset();
    const ada = await makeUser(app.dataSource, { username: 'ada.lovelace' });
    const module = await makeModule(app.dataSource, {
      code: 'CMP101',
      year: 2026,
      description: 'Analytical Engines',
    });
    await assignRole(app.dataSource, ada.id, module.id, ModuleRole.Lecturer);

    await page.goto(`${app.url}/api/docs`);
    const host = new URL(idp.issuer).host;
    const signIn = page.locator('#session-status button').getByText(`Sign in with ${host}`);
    await signIn.waitFor();
    // The password sign-in stays (PASSWORD_LOGIN is on by default).
    await page.locator('#session-status').getByText('POST /api/auth/login').waitFor();
    await signIn.click();

    // Swagger UI's Authorize dialog, the IdP's entry (its flows read from the IdP's discovery document).
    const dialog = page.locator('.swagger-ui .dialog-ux .modal-ux');
    // Swagger UI lists every flow the IdP supports; the console's is authorization code with PKCE, its client
    // id filled in from OIDC_CLIENT_ID.
    const entry = dialog.locator('.auth-container').filter({ hasText: 'authorization_code with PKCE' });
    await entry.locator('input#client_id_authorization_code').waitFor();
    expect(await entry.locator('input#client_id_authorization_code').inputValue()).toBe(CONSOLE_CLIENT_ID);
    const popupOpened = context.waitForEvent('page');
    await entry.locator('button.authorize').click();
    const popup = await popupOpened;

    // The IdP's own login form, then its consent page.
    await popup.locator('input[name="login"]').fill('ada.lovelace');
    await popup.locator('input[name="password"]').fill('any-password-the-test-idp-accepts');
    await popup.locator('button[type="submit"]').click();
    await popup
      .locator('button[type="submit"]')
      .getByText(/continue/i)
      .click();
    await popup.waitForEvent('close');

    // Back on the page, authorized: the entry now offers Logout.
    await entry.locator('button.authorize').getByText('Logout').waitFor();
    await entry.locator('button.btn-done').click();
    await page.locator('.swagger-ui .auth-wrapper button.authorize.locked').waitFor();
    await page
      .locator('#session-status')
      .getByText(/^Signed in as ada\.lovelace until /)
      .waitFor();
    // Of the IdP's answer only the access token is kept: no refresh or ID token in the page's storage.
    const stored = await page.evaluate(
      () =>
        JSON.parse(
          (
            globalThis as unknown as { localStorage: { getItem(key: string): string | null } }
          ).localStorage.getItem('authorized') ?? '{}',
        ) as { sso?: { token?: Record<string, unknown> } },
    );
    expect(typeof stored.sso?.token?.access_token).toBe('string');
    expect(Object.keys(stored.sso?.token ?? {}).filter((key) => /refresh|id_token/.test(key))).toEqual([]);

    const operation = page
      .locator('.swagger-ui .opblock.opblock-get')
      .filter({ has: page.locator('.opblock-summary-path[data-path="/api/modules/me"]') });
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('button.execute').click();
    const live = operation.locator('.responses-wrapper .live-responses-table');
    await live.locator('.response-col_status').getByText('200', { exact: true }).waitFor();
    const body = await live.locator('.response-col_description pre').first().innerText();
    expect(JSON.parse(body)).toMatchObject({ success: true });
    expect(body).toContain('CMP101');
    // The request carried the IdP's access token, a JWT for this API's audience.
    const curl = await operation.locator('.curl-command').innerText();
    const token = /Authorization: Bearer (\S+?)'/.exec(curl)?.[1] ?? '';
    expect(decodeJwt(token)).toMatchObject({
      iss: idp.issuer,
      aud: TEST_AUDIENCE,
      preferred_username: 'ada.lovelace',
    });

    await operation.scrollIntoViewIfNeeded();
    await mkdir(path.dirname(SSO_SCREENSHOT), { recursive: true });
    await page.screenshot({
      path: SSO_SCREENSHOT,
      fullPage: false,
      mask: [page.locator('.swagger-ui .curl-command')],
      maskColor: '#333',
    });
    expect(problems).toEqual([]);
  });
});
