// One-way announcements between parts built at different times: what is built first announces,
// what is built later follows, so no part holds a slot for another that does not exist yet.
export class Signal<Args extends unknown[] = []> {
  private readonly followers = new Set<(...args: Args) => void>();

  /** Returns the function that stops following. */
  follow(follower: (...args: Args) => void): () => void {
    this.followers.add(follower);
    return () => {
      this.followers.delete(follower);
    };
  }

  emit(...args: Args): void {
    for (const follower of this.followers) follower(...args);
  }
}
