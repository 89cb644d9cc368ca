import { Global, Injectable, Module } from '@nestjs/common';

/**
 * Announces that the service is stopping, before the HTTP server waits for the requests in flight: requests
 * that hold on by design (the events long-poll) answer at once instead of keeping the shutdown waiting.
 */
@Injectable()
export class Draining {
  private readonly listeners = new Set<() => void>();
  private started = false;

  get stopping(): boolean {
    return this.started;
  }

  /** Calls `listener` once when the service starts stopping; returns the unsubscribe. */
  onDrain(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  begin(): void {
    if (this.started) return;
    this.started = true;
    for (const listener of [...this.listeners]) listener();
    this.listeners.clear();
  }
}

@Global()
@Module({ providers: [Draining], exports: [Draining] })
export class DrainingModule {}
