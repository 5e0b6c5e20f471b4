// Sorting by code unit: a stable order for files and lists. String#localeCompare would load the
// ICU collator, about 2 MiB of Homebridge's memory, for keys (ids, kinds) that have no language.

/** Compares two strings by UTF-16 code unit, as Array#sort does without a comparator. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
