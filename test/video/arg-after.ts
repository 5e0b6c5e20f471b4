// Reading an ffmpeg argument list in tests: the value given after a flag.

/** The value after `flag` (its first occurrence), or undefined when the flag is absent. */
export function argAfter(args: readonly string[], flag: string): string | undefined {
  const index = args.indexOf(flag);
  return index < 0 ? undefined : args[index + 1];
}
