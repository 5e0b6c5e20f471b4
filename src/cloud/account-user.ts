// Who the account's own user is: the id GET /users/me answers. Read once and kept for the run (it
// never changes for a linked account); until an answer names it, it is unknown, and asked again
// the next time it is needed. A removal from a lock takes the lock away only for this user.
import { z } from 'zod/v3';

import type { ApiClient } from './http/api.js';

// The callbacks name a user by `UserID`; /users/me answers the same field.
const meSchema = z.object({ UserID: z.string().min(1) });

export class AccountUser {
  private known: string | undefined;
  private reading: Promise<string | undefined> | undefined;

  constructor(private readonly client: ApiClient) {}

  /** The account's own user id; undefined while the service has not said (no answer, or an answer without it). Never rejects. */
  id(): Promise<string | undefined> {
    if (this.known !== undefined) return Promise.resolve(this.known);
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(): Promise<string | undefined> {
    try {
      const parsed = meSchema.safeParse(await this.client.request('GET', '/users/me'));
      if (parsed.success) this.known = parsed.data.UserID;
    } catch {
      // Unknown for now: the caller decides without it, and the next need asks again.
    }
    return this.known;
  }
}
