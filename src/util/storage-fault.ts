// What the user can do about a file system error, by its code: the raw message could name paths.
const STORAGE_FAULTS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full (ENOSPC)',
  EDQUOT: 'the disk quota is used up (EDQUOT)',
  EROFS: 'the file system is read-only (EROFS)',
  EIO: 'the disk reported an input/output error (EIO)',
  EACCES: 'permission denied on the plugin\'s storage folder (EACCES)',
  EPERM: 'permission denied on the plugin\'s storage folder (EPERM)',
};

/** Words for a known file system fault; undefined for any other error. */
export function storageFaultText(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? STORAGE_FAULTS[code] : undefined;
}
