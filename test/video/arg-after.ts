// Reading an ffmpeg argument list in tests: the value given after a flag.
import { expect } from 'vitest';

/** The value after `flag` (its first occurrence), or undefined when the flag is absent. */
export function argAfter(args: readonly string[], flag: string): string | undefined {
  const index = args.indexOf(flag);
  return index < 0 ? undefined : args[index + 1];
}

/**
 * Expects each flag of `want` to be followed by its value, compared as one object: a failure shows
 * every flag that differs at once.
 */
export function expectFlags(args: readonly string[], want: Readonly<Record<string, string>>): void {
  expect(Object.fromEntries(Object.keys(want).map((flag) => [flag, argAfter(args, flag)]))).toEqual(want);
}
