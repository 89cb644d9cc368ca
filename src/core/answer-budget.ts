/**
 * A budget of bytes shared by the answers that are large enough to matter (docs/decisions.md, "Large answers"):
 * an answer takes its estimated size before it is read and gives it back once it has been sent, and waits, in
 * the order of arrival, while the budget cannot hold it. An answer larger than the whole budget is admitted
 * alone. So however many large answers are asked for at once, those in memory together stay within the budget.
 */
export class AnswerBudget {
  private used = 0;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {}

  /** Bytes held now, and answers waiting (for tests and metrics). */
  get state(): { used: number; waiting: number } {
    return { used: this.used, waiting: this.waiting.length };
  }

  /** Resolves once `bytes` fit, with the function that gives them back (calling it again does nothing). */
  async take(bytes: number): Promise<() => void> {
    const weight = Math.min(Math.max(bytes, 0), this.capacity);
    if (this.waiting.length === 0 && this.used + weight <= this.capacity) this.used += weight;
    else await new Promise<void>((grant) => this.waiting.push({ bytes: weight, grant }));
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= weight;
      this.admitWaiting();
    };
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.used + this.waiting[0].bytes <= this.capacity) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.grant();
    }
  }
}
