import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isForbiddenAddress } from './forbidden-addresses.js';
import { HostNotResolved, WebhookUrlNotAllowed } from './webhook.errors.js';

interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** c-ares's wait for one DNS server's answer, and how many times each server is asked. */
const DNS_TRY_MS = 2000;
const DNS_TRIES = 2;

/**
 * DNS answers for webhook hosts, asked afresh each time, from the DNS servers of /etc/resolv.conf (search
 * domains included) through c-ares (`dns.Resolver`), never `dns.lookup`: that runs getaddrinfo on libuv's
 * thread pool, the 4 threads password hashing (argon2) needs, with no time bound, so a receiver whose DNS
 * stalls would hold logins back. c-ares runs on the event loop; a lookup ends at its own bound (DNS_TRY_MS ×
 * DNS_TRIES per server) or when `signal` aborts (the attempt's deadline), whichever comes first. /etc/hosts is
 * not read (docs/webhooks.md, "DNS"). A class of its own so tests can answer for a host name that has no real
 * record, or point it at a DNS server of theirs.
 */
@Injectable()
export class HostResolver {
  private servers: string[] | undefined;

  /** The DNS servers asked from now on (`ip` or `ip:port`); the system's by default. */
  useServers(servers: string[]): void {
    this.servers = servers;
  }

  async resolve(hostname: string, signal?: AbortSignal): Promise<ResolvedAddress[]> {
    const resolver = new Resolver({ timeout: DNS_TRY_MS, tries: DNS_TRIES });
    if (this.servers) resolver.setServers(this.servers);
    const cancel = () => resolver.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      signal?.throwIfAborted();
      const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      const answers = [
        ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
        ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
      ];
      if (answers.length === 0) {
        const failed = [v4, v6].find((answer) => answer.status === 'rejected');
        throw new HostNotResolved((failed?.reason as NodeJS.ErrnoException | undefined)?.code ?? 'ENODATA');
      }
      return answers;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }
}

/** A webhook URL that passed the rules, with the address the delivery must connect to. */
export interface CheckedUrl {
  url: URL;
  /** The host name without IPv6 brackets. */
  host: string;
  address: ResolvedAddress;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/**
 * The URL rules of docs/webhooks.md: `https://` (or `http://` with WEBHOOK_ALLOW_HTTP), no credentials and no
 * control character in the URL, and every address the host resolves to public (unless WEBHOOK_ALLOW_PRIVATE).
 * Applied at create and update and again before every delivery, with fresh DNS answers.
 */
@Injectable()
export class WebhookUrlRules {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly resolver: HostResolver,
  ) {}

  /**
   * Throws {@link WebhookUrlNotAllowed} unless the URL may be delivered to now ({@link HostNotResolved}, a
   * kind of it, when DNS gave no answer). `signal` bounds the DNS lookup.
   */
  async check(text: string, signal?: AbortSignal): Promise<CheckedUrl> {
    const { allowHttp, allowPrivate } = this.config.webhooks;
    // The URL parser would drop some (tabs, line breaks) and encode others: refused as sent.
    if (CONTROL.test(text)) throw new WebhookUrlNotAllowed();
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new WebhookUrlNotAllowed();
    }
    const schemeOk = url.protocol === 'https:' || (allowHttp && url.protocol === 'http:');
    if (!schemeOk || url.username !== '' || url.password !== '' || url.hostname === '')
      throw new WebhookUrlNotAllowed();
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    let addresses: ResolvedAddress[];
    const literal = isIP(host);
    if (literal !== 0) addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
    else if (host === 'localhost' || host.endsWith('.localhost')) {
      // Loopback by definition (RFC 6761), without asking DNS; refused below unless private addresses are allowed.
      addresses = [{ address: '127.0.0.1', family: 4 }];
    } else {
      try {
        addresses = await this.resolver.resolve(host, signal);
      } catch (error) {
        throw error instanceof HostNotResolved ? error : new HostNotResolved('ESERVFAIL');
      }
    }
    if (addresses.length === 0) throw new HostNotResolved('ENODATA');
    // Every answer is checked, not only the one used: a later connection could be given any of them.
    if (!allowPrivate && addresses.some((answer) => isForbiddenAddress(answer.address)))
      throw new WebhookUrlNotAllowed();
    return { url, host, address: addresses[0] };
  }
}
