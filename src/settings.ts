// Names and defaults shared by the plugin, its settings UI and its tests.
export const PLUGIN_NAME = 'homebridge-lock-access';
export const PLATFORM_NAME = 'LockAccess';
export const DEFAULT_DISPLAY_NAME = 'Lock Access';

/** Folder under Homebridge's storage path that holds everything the plugin writes. */
export const STORAGE_FOLDER = 'lock-access';
/** Folder inside it with a folder per extra account (`accounts/<id>/`). */
export const ACCOUNTS_FOLDER = 'accounts';

export const DEFAULT_LISTEN_HOST = '0.0.0.0';
export const DEFAULT_LISTEN_PORT = 8582;
export const DEFAULT_TOLERANCE_SECONDS = 300;
export const DEFAULT_MOTION_TIMEOUT_SECONDS = 30;
/** Without a verified callback for this long, the plugin checks that events still arrive. */
export const DEFAULT_DELIVERY_CHECK_MINUTES = 360;
/** A week: longer would hide a broken way in for most of a month. */
export const MAX_DELIVERY_CHECK_MINUTES = 10_080;
/** A doorbell recording plays in the camera view this long after it became available. */
export const DEFAULT_REPLAY_MINUTES = 60;
/** A day: older recordings are stale news at the door. */
export const MAX_REPLAY_MINUTES = 1440;

/** Header the service adds to every callback; its value is our stored random token. */
export const CALLBACK_TOKEN_HEADER = 'x-lock-access-token';
export const SIGNATURE_HEADER = 'x-svc-signature';
export const API_KEY_HEADER = 'x-svc-api-key';
export const ACCESS_TOKEN_HEADER = 'x-svc-access-token';

export const LOCK_NOTIFICATION_TYPES = ['operation', 'configuration', 'battery', 'systemstatus', 'accessmgmt'] as const;
export const DOORBELL_NOTIFICATION_TYPES = ['motiondetected', 'videoavailable', 'buttonpush'] as const;
export const USER_NOTIFICATION_TYPES = ['lockmembership', 'lifecycle'] as const;

/** Callbacks bigger than this are refused with 400 (never 413, which the sender would retry). */
export const MAX_CALLBACK_BYTES = 256 * 1024;
/** A doorbell press or motion older than this is recorded but rings no phone. */
export const MAX_RING_AGE_MS = 60_000;
/** How long delivered event ids are remembered to drop duplicates. */
export const DEDUPE_TTL_MS = 72 * 60 * 60 * 1000;

export const MANUFACTURER = 'Lock Access';
