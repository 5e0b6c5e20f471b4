// What every call made with an access token does after a 401, in one place: it asks the token
// manager for a token to try again, and sends once more with it. That token is a newer one already
// in use (an answer's header brought it while the call was under way) or one from a renewal. A
// refusal of the newer one earns the renewal of its own; a renewed token refused is final.

/** The token to try a refused call again with; `renewed` when it came from a renewal (ours or another process's). */
export interface RetryToken {
  token: string;
  renewed: boolean;
}

export interface RefusedRetrySteps<A> {
  /** Whether the service refused the token of this answer (401). */
  refused(answer: A): boolean;
  /** The token manager's token after a refusal of `token`, or its typed error. */
  renew(token: string): Promise<RetryToken>;
  send(token: string): Promise<A>;
  /** Lets go of a refused answer (its body) before the next try. */
  discard?(answer: A): Promise<void>;
}

/** The answer that ends it (still refused when every token was) and the token it was sent with. */
export async function retryRefused<A>(token: string, first: A, steps: RefusedRetrySteps<A>): Promise<{ answer: A; token: string }> {
  let answer = first;
  let sentWith = token;
  // At most two tries: a newer token in use, then a renewal's.
  for (let tries = 0, renewed = false; steps.refused(answer) && !renewed && tries < 2; tries += 1) {
    await steps.discard?.(answer);
    ({ token: sentWith, renewed } = await steps.renew(sentWith));
    answer = await steps.send(sentWith);
  }
  return { answer, token: sentWith };
}
