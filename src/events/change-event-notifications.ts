import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { CHANGE_EVENTS_CHANNEL } from './change-events.repository.js';

/** A wait for the next notification: `woken` resolves on it (or when the listener cannot promise one). */
interface NotificationTicket {
  woken: Promise<void>;
  cancel(): void;
}

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 10_000;

/**
 * The replica's one PostgreSQL connection that LISTENs on the change events channel. `append` NOTIFYs in the
 * writing transaction; PostgreSQL delivers the notification to every listening connection of every replica when
 * that transaction commits, and this wakes the requests waiting here. It holds a connection of its own, outside
 * the pool: a LISTEN is bound to its session. Losing it wakes every waiter (a change may go unannounced), and
 * while it is gone `connected` is false and waiters re-read on a timer; it reconnects with backoff.
 */
@Injectable()
export class ChangeEventNotifications implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ChangeEventNotifications.name);
  private readonly waiting = new Set<() => void>();
  private readonly listeners = new Set<() => void>();
  private client: pg.Client | undefined;
  private listening = false;
  private stopped = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.wakeAll();
    await this.client?.end().catch(() => undefined);
  }

  /** Whether notifications can currently arrive (a waiter that cannot rely on them polls instead). */
  get connected(): boolean {
    return this.listening;
  }

  /** A ticket for the next notification after this call; take it before reading, so none is missed. */
  next(): NotificationTicket {
    let wake!: () => void;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    this.waiting.add(wake);
    return { woken, cancel: () => this.waiting.delete(wake) };
  }

  /**
   * Calls `listener` at every notification (and whenever one may have been missed: the connection was lost or
   * made again), until the returned function is called.
   */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private wakeAll(): void {
    const waking = [...this.waiting];
    this.waiting.clear();
    for (const wake of waking) wake();
    for (const listener of this.listeners) listener();
  }

  private async connect(): Promise<void> {
    const options = this.dataSource.options as { url?: string; extra?: { application_name?: string } };
    const client = new pg.Client({
      connectionString: options.url,
      application_name: `${options.extra?.application_name ?? 'module-admin-service'} (events listener)`,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
    });
    client.on('notification', () => this.wakeAll());
    client.on('error', (error: Error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_EVENTS_CHANNEL}`);
      this.listening = true;
      this.retryMs = RECONNECT_MIN_MS;
      // Anything committed while no connection listened is found by the waiters' next read.
      this.wakeAll();
    } catch (error) {
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error: unknown): void {
    if (client !== this.client || this.stopped) return;
    this.client = undefined;
    this.listening = false;
    this.wakeAll();
    void client.end().catch(() => undefined);
    this.logger.warn(
      `Change event listener disconnected${error instanceof Error ? `: ${error.message}` : ''}; retrying in ${this.retryMs} ms`,
    );
    this.retryTimer = setTimeout(() => void this.connect(), this.retryMs).unref();
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
  }
}
