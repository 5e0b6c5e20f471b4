// Types for the settings page's scripts (homebridge-ui/public/js, checked by tsconfig.ui.json).
// The shapes come from the plugin's own sources, so the page and the settings server cannot drift apart.
import type {} from '@homebridge/plugin-ui-utils/ui.interface';
import type { z } from 'zod/v3';

import type { configSchema } from '../../src/config.js';
import type { FieldProblem } from '../../src/settings-ui/config-check.js';
import type { MatterPairingInfo } from '../../src/settings-ui/matter-pairing.js';
import type { FoundDevices, UiStatus } from '../../src/settings-ui/settings-views.js';
import type { EventLogEntry } from '../../src/status/event-log.js';
import type { PersonSeen } from '../../src/status/people-seen.js';
import type { DeviceStatus } from '../../src/status/status.js';
import type { LeftRegistration } from '../../src/settings-ui/account-link.js';
import type { TestEventVerdict } from '../../src/settings-ui/test-event-verdict.js';
import type { KeypadCode } from '../../src/status/keypad-codes.js';
import type { UiMessage as CodedMessage } from '../../src/util/ui-message.js';

export type { EventLogEntry, FieldProblem, FoundDevices, LeftRegistration, MatterPairingInfo, PersonSeen, UiStatus, DeviceStatus, TestEventVerdict, KeypadCode };

// The schema is made when a config is checked (a function), so its type is the function's result.
type ConfigInput = z.input<ReturnType<typeof configSchema>>;

/** The plugin's config block as the Homebridge UI holds it: anything may be missing or wrong until checked. */
export type ConfigBlock = Partial<Omit<ConfigInput, 'webhook' | 'platform'>> & {
  platform: string;
  webhook?: Partial<NonNullable<ConfigInput['webhook']>>;
  [key: string]: unknown;
};

export type DeviceKind = 'lock' | 'doorbell';

/** A lock or doorbell entry of the config block (an override of what the service lists). */
export interface DeviceEntry {
  id: string;
  name?: string;
  hidden?: boolean;
  doorSensor?: boolean;
  doorSensorOnly?: boolean;
  motionTimeoutSeconds?: number;
  [key: string]: unknown;
}

/**
 * Words the settings server or the plugin's status sends for the page to show: a catalog key with its
 * params and the English sentence (for a code the page does not know), or, from older status files,
 * a plain sentence.
 */
export type UiMessage = string | CodedMessage;

/** What the settings server answers after signing in, linking or unlinking. */
export interface LinkAnswer {
  message: UiMessage;
  /** After an unlink: what was left behind, each its own message. */
  notes?: UiMessage[];
  ok?: boolean;
  url?: string;
  left?: LeftRegistration[];
  /** After an unlink: false when the unlinked state could not be written (the message says what to do). */
  saved?: boolean;
}

declare global {
  interface Window {
    /** hls.js (vendor/hls.light.min.js), absent where the vendored file failed to load. */
    Hls?: typeof import('hls.js').default;
  }
}
