// A value made when first asked for and kept only while something still holds it: the garbage
// collector may drop it between uses, and the next use makes it again. For zod schemas that check a
// saved file at start (every device's in one go) and seldom after, which would otherwise stay in
// memory for as long as Homebridge runs.
export function transient<T extends object>(make: () => T): () => T {
  let kept: WeakRef<T> | undefined;
  return () => {
    const value = kept?.deref();
    if (value !== undefined) return value;
    const made = make();
    kept = new WeakRef(made);
    return made;
  };
}
