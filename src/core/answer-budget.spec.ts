import { AnswerBudget } from './answer-budget.js';

/** Whether `promise` has settled after the current microtasks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe(AnswerBudget.name, () => {
  it('admits answers while they fit and the next in order of arrival once bytes are given back', async () => {
    const budget = new AnswerBudget(100);
    const giveA = await budget.take(60);
    const b = budget.take(50);
    const c = budget.take(10);
    expect(await settled(b)).toBe(false);
    // First come, first served: the small one does not overtake the one waiting before it.
    expect(await settled(c)).toBe(false);
    expect(budget.state).toEqual({ used: 60, waiting: 2 });
    giveA();
    giveA();
    expect(await settled(b)).toBe(true);
    expect(await settled(c)).toBe(true);
    expect(budget.state).toEqual({ used: 60, waiting: 0 });
  });

  it('admits an answer larger than the whole budget alone', async () => {
    const budget = new AnswerBudget(100);
    const giveSmall = await budget.take(1);
    const huge = budget.take(1_000);
    expect(await settled(huge)).toBe(false);
    giveSmall();
    const giveHuge = await huge;
    expect(budget.state).toEqual({ used: 100, waiting: 0 });
    const next = budget.take(1);
    expect(await settled(next)).toBe(false);
    giveHuge();
    expect(await settled(next)).toBe(true);
  });
});
