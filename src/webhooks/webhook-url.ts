import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { type AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { isForbiddenAddress } from './address-rules.js';
import { WebhookUrlNotAllowed } from './webhook.errors.js';

interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * DNS answers for webhook hosts, asked afresh each time (the system resolver, as any outbound connection
 * would). A class of its own so tests can answer for a host name that has no real record.
 */
@Injectable()
export class HostResolver {
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    const answers = await lookup(hostname, { all: true, verbatim: true });
    return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
  }
}

/** A webhook URL that passed the rules, with the address the delivery must connect to. */
export interface CheckedUrl {
  url: URL;
  /** The host name without IPv6 brackets. */
  host: string;
  address: ResolvedAddress;
}

/**
 * The URL rules of docs/webhooks.md: `https://` (or `http://` with WEBHOOK_ALLOW_HTTP), no credentials in the
 * URL, and every address the host resolves to public (unless WEBHOOK_ALLOW_PRIVATE). Applied at create and
 * update and again before every delivery, with fresh DNS answers.
 */
@Injectable()
export class WebhookUrlRules {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly resolver: HostResolver,
  ) {}

  /** Throws {@link WebhookUrlNotAllowed} unless the URL may be delivered to now. */
  async check(text: string): Promise<CheckedUrl> {
    const { allowHttp, allowPrivate } = this.config.webhooks;
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
    else {
      try {
        addresses = await this.resolver.resolve(host);
      } catch {
        throw new WebhookUrlNotAllowed();
      }
    }
    if (addresses.length === 0) throw new WebhookUrlNotAllowed();
    // Every answer is checked, not only the one used: a later connection could be given any of them.
    if (!allowPrivate && addresses.some((answer) => isForbiddenAddress(answer.address)))
      throw new WebhookUrlNotAllowed();
    return { url, host, address: addresses[0] };
  }
}
