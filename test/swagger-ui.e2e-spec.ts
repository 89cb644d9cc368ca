import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from './support/app.js';
import { DEFAULT_PASSWORD, makeModule, makeUser } from './support/factories.js';
import { client } from './support/http.js';
import { multipartBody } from './support/openapi-requests.js';
import { chromiumRequirement, describeWhenAvailable } from './support/requires.js';

/** Debian's chromium (.ci/install-chromium.sh); never a browser that Playwright downloads. */
const browser = chromiumRequirement();
const SCREENSHOT = path.resolve('docs/images/swagger-ui.png');
const TRY_PATH = '/api/modules';

describeWhenAvailable(browser, 'Swagger UI in a real browser', () => {
  let app: TestApp;
  let userDataDir: string;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  /** The signed-in admin of the first test, still authorized in the page for the second. */
  const session = { token: '' };

  beforeAll(async () => {
    app = await startTestApp();
    userDataDir = await mkdtemp(path.join(tmpdir(), 'mas-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
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
    page = context.pages()[0] ?? (await context.newPage());
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
    page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
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
    await operation.locator('button.try-out__btn').click();
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
    await operation.locator('button.try-out__btn').click();
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
});
