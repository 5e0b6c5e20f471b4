// What the rest of the plugin needs from the cloud API client (implemented in http-client.ts).
import type { z } from 'zod/v3';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface RequestOptions<T> {
  body?: unknown;
  query?: Record<string, string>;
  /** Validates the JSON response; without it the parsed JSON (or undefined for an empty body) is returned as unknown. */
  schema?: z.ZodType<T, z.ZodTypeDef, unknown>;
  /** Overrides the default timeout. */
  timeoutMs?: number;
}

export interface ApiClient {
  /**
   * Calls `{baseUrl}{path}` with the API key and a current access token. Throws the typed errors of
   * ./errors.ts. A 401 gets one token refresh and one retry before AuthorizationLostError.
   */
  request<T = unknown>(method: HttpMethod, path: string, options?: RequestOptions<T>): Promise<T>;
}
