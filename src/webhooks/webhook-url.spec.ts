import { loadConfig } from '../config/app-config.js';
import { HostResolver, WebhookUrlRules } from './webhook-url.js';
import { HostNotResolved, WebhookUrlNotAllowed } from './webhook.errors.js';

// The unit tier's one fake style (src/testing/fakes.ts): the resolver is a subclass answering from a table.

type Answer = Awaited<ReturnType<HostResolver['resolve']>>;

/** DNS in memory: each host name's answers, or the error code it fails with; every question is recorded. */
class FakeResolver extends HostResolver {
  readonly asked: { hostname: string; signal: AbortSignal | undefined }[] = [];

  constructor(private readonly zone: Record<string, Answer | string>) {
    super();
  }

  override resolve(hostname: string, signal?: AbortSignal): Promise<Answer> {
    this.asked.push({ hostname, signal });
    const answer = this.zone[hostname];
    if (answer === undefined) return Promise.reject(new HostNotResolved('ENOTFOUND'));
    if (typeof answer === 'string')
      return Promise.reject(answer === 'crash' ? new Error('resolver crashed') : new HostNotResolved(answer));
    return Promise.resolve(answer);
  }
}

const ZONE: Record<string, Answer | string> = {
  'hooks.example.edu': [
    { address: '192.0.2.10', family: 4 },
    { address: '2001:db8::10', family: 6 },
  ],
  // One public answer and one private: the host may be given either on a later connection.
  'mixed.example.edu': [
    { address: '192.0.2.11', family: 4 },
    { address: '10.0.0.5', family: 4 },
  ],
  'metadata.example.edu': [{ address: '169.254.169.254', family: 4 }],
  'slow.example.edu': 'ETIMEOUT',
  'broken.example.edu': 'crash',
  'empty.example.edu': [],
};

function rules(env: Record<string, string> = {}) {
  const resolver = new FakeResolver(ZONE);
  return { resolver, rules: new WebhookUrlRules(loadConfig(env), resolver) };
}

describe(WebhookUrlRules.name, () => {
  it('accepts an https URL whose every address is public, connecting to the first answer', async () => {
    const { rules: subject, resolver } = rules();
    const signal = new AbortController().signal;
    const checked = await subject.check('https://hooks.example.edu:8443/in?x=1', signal);
    expect(checked.url.href).toBe('https://hooks.example.edu:8443/in?x=1');
    expect(checked.host).toBe('hooks.example.edu');
    expect(checked.address).toEqual({ address: '192.0.2.10', family: 4 });
    expect(resolver.asked).toEqual([{ hostname: 'hooks.example.edu', signal }]);
  });

  it.each([
    ['plain http', 'http://hooks.example.edu/in'],
    ['another scheme', 'ftp://hooks.example.edu/in'],
    ['credentials', 'https://user:secret@hooks.example.edu/in'],
    ['a user name alone', 'https://user@hooks.example.edu/in'],
    ['a tab', 'https://hooks.example.edu/\tin'],
    ['a line break', 'https://hooks.example.edu/in\n'],
    ['a C1 control character', 'https://hooks.example.edu/in\u0085'],
    ['no URL at all', 'hooks.example.edu/in'],
  ])('refuses %s without asking DNS', async (_case, url) => {
    const { rules: subject, resolver } = rules();
    await expect(subject.check(url)).rejects.toThrow(WebhookUrlNotAllowed);
    expect(resolver.asked).toEqual([]);
  });

  it.each([
    ['a private answer among public ones', 'https://mixed.example.edu/in'],
    ['a link-local answer (cloud metadata)', 'https://metadata.example.edu/in'],
    ['a loopback literal', 'https://127.0.0.1/in'],
    ['a private IPv6 literal', 'https://[fd00::1]/in'],
    ['an IPv4-mapped loopback literal', 'https://[::ffff:127.0.0.1]/in'],
    ['localhost', 'https://localhost/in'],
    ['a name under .localhost', 'https://api.localhost/in'],
  ])('refuses %s with 400, unless private addresses are allowed', async (_case, url) => {
    const refused = rules();
    const error: unknown = await refused.rules.check(url).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WebhookUrlNotAllowed);
    expect(error).not.toBeInstanceOf(HostNotResolved);
    expect(error).toMatchObject({ status: 400 });
    await expect(rules({ WEBHOOK_ALLOW_PRIVATE: 'true' }).rules.check(url)).resolves.toMatchObject({
      url: new URL(url),
    });
  });

  it('never asks DNS for an address literal or for localhost', async () => {
    const { rules: subject, resolver } = rules({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    await expect(subject.check('https://[2001:db8::1]:9000/in')).resolves.toMatchObject({
      host: '2001:db8::1',
      address: { address: '2001:db8::1', family: 6 },
    });
    await expect(subject.check('https://localhost/in')).resolves.toMatchObject({
      address: { address: '127.0.0.1', family: 4 },
    });
    expect(resolver.asked).toEqual([]);
  });

  it('accepts http only with WEBHOOK_ALLOW_HTTP', async () => {
    await expect(
      rules({ WEBHOOK_ALLOW_HTTP: 'true' }).rules.check('http://hooks.example.edu/in'),
    ).resolves.toMatchObject({ host: 'hooks.example.edu' });
    await expect(
      rules({ WEBHOOK_ALLOW_HTTP: 'true' }).rules.check('ftp://hooks.example.edu/in'),
    ).rejects.toThrow(WebhookUrlNotAllowed);
  });

  it('refuses a host DNS gives no address for, keeping the resolver code, and any other resolver failure', async () => {
    const { rules: subject } = rules();
    await expect(subject.check('https://nowhere.example.edu/')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(subject.check('https://slow.example.edu/')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await expect(subject.check('https://empty.example.edu/')).rejects.toMatchObject({ code: 'ENODATA' });
    const crashed = await subject.check('https://broken.example.edu/').catch((caught: unknown) => caught);
    expect(crashed).toBeInstanceOf(HostNotResolved);
    expect(crashed).toMatchObject({ code: 'ESERVFAIL', status: 400 });
  });

  it('refuses an unresolvable host even when private addresses are allowed', async () => {
    await expect(
      rules({ WEBHOOK_ALLOW_PRIVATE: 'true' }).rules.check('https://nowhere.example.edu/'),
    ).rejects.toThrow(HostNotResolved);
  });
});
