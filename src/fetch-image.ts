// Fetches a doorbell still image (the motion callback's SecureURL or Url) with a timeout and a size
// cap, so a slow or huge image can never stall a snapshot request or fill memory.
const TIMEOUT_MS = 8_000;
const MAX_BYTES = 8 * 1024 * 1024;

export async function fetchImage(url: string): Promise<Buffer> {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'follow' });
  if (!response.ok) throw new Error(`the still image answered HTTP ${response.status}`);
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_BYTES) throw new Error('the still image is too large');
  const body = Buffer.from(await response.arrayBuffer());
  if (body.length > MAX_BYTES) throw new Error('the still image is too large');
  if (body.length === 0) throw new Error('the still image is empty');
  return body;
}
