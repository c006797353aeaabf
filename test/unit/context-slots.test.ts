/**
 * Context slots share one AsyncLocalStorage but read as storages of their own: a slot set in
 * a run is seen by the async work it starts, an inner run of one slot keeps the other slots'
 * values, concurrent runs never see each other's, and outside any run a slot is undefined.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { contextSlot } from '../../lambdas/shared/context-slot.ts';

describe('context slots', () => {
  const request = contextSlot<string>('request');
  const store = contextSlot<number>('store');

  it('is undefined outside a run of it', () => {
    expect(request.getStore()).toBeUndefined();
    store.run(1, () => expect(request.getStore()).toBeUndefined());
  });

  it('follows the run through awaits and timers', async () => {
    const seen = await request.run('a', async () => {
      await sleep(1);
      const inTimer = await new Promise<string | undefined>((resolve) => setTimeout(() => resolve(request.getStore()), 1));
      return [request.getStore(), inTimer];
    });
    expect(seen).toEqual(['a', 'a']);
    expect(request.getStore()).toBeUndefined();
  });

  it('keeps the other slots when one is set inside another', () => {
    request.run('outer', () => {
      store.run(7, () => {
        expect(request.getStore()).toBe('outer');
        expect(store.getStore()).toBe(7);
        request.run('inner', () => {
          expect(request.getStore()).toBe('inner');
          expect(store.getStore()).toBe(7);
        });
        expect(request.getStore()).toBe('outer');
      });
      expect(store.getStore()).toBeUndefined();
    });
  });

  it('never lets concurrent runs see each other', async () => {
    const runs = Array.from({ length: 20 }, (_, i) =>
      request.run(`r${i}`, () =>
        store.run(i, async () => {
          await sleep(20 - i);
          return `${request.getStore()}:${store.getStore()}`;
        }),
      ),
    );
    expect(await Promise.all(runs)).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}:${i}`));
  });

  it('two slots of one name stay apart', () => {
    const twin = contextSlot<string>('request');
    request.run('mine', () => expect(twin.getStore()).toBeUndefined());
  });
});
