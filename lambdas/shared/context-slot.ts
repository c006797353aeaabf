/**
 * Values that follow one request (or one worker call) through its async work, all in one
 * AsyncLocalStorage. On Node 20 and 22 each AsyncLocalStorage that has been used is copied
 * onto every promise and async resource the process creates, whatever is running: five
 * storages cost five property writes per promise, and a poll creates hundreds. One storage
 * holding a frame of slots costs one. (Node 24 propagates a context frame instead, at no cost
 * per storage; this costs nothing more there.)
 */
import { AsyncLocalStorage } from 'node:async_hooks';

type Frame = Readonly<Record<symbol, unknown>>;

const frames = new AsyncLocalStorage<Frame>();

/** One value in the current frame: `run` and `getStore` as on an AsyncLocalStorage of its own. */
export interface ContextSlot<T> {
  /** Runs `fn` with this slot set to `value`; the other slots keep the values they had. */
  run<R>(value: T, fn: () => R): R;
  /** The slot's value where this runs, `undefined` outside a `run` of it. */
  getStore(): T | undefined;
}

/** A new slot, named for stack dumps and debuggers only. */
export function contextSlot<T>(name: string): ContextSlot<T> {
  const key = Symbol(name);
  return {
    run: (value, fn) => frames.run({ ...frames.getStore(), [key]: value }, fn),
    getStore: () => frames.getStore()?.[key] as T | undefined,
  };
}
