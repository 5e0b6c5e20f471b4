// The running plugin, built in stages; each stage is a function of the records the ones before
// built, and each record is read-only:
//   files and link: the status file, the event log, the devices' saved state; tokens, the cloud
//     client, the webhook token, the public address, link and unlink;
//   listener: the device registry and the webhook listener whose events apply to it;
//   views: HomeKit, Matter and the status file's device list attach to the registry, the event log
//     follows the routed events, and the devices of config and the last run are served at once;
//   watchers: the setup against the account, the token file, the self-check, the delivery watch;
//     doorbell video checks ffmpeg once the first setup has run.
// A later stage follows what an earlier one announces; none waits for the service. Each part says
// in which step it stops (util/shutdown.ts). Before any of it, the storage's instance lock: a second
// LockAccess block on the same storage runs nothing.
import { MATTER_OFF_FOR_BRIDGE, matterOf } from '../matter/matter-on-bridge.js';
import { claimInstance } from '../storage/instance-lock.js';
import { sweepLeftoverTempFiles } from '../storage/leftover-temp-files.js';
import { errorText } from '../util/error-text.js';
import { Storage } from '../storage.js';
import { linkStage, openFiles, type Files, type Link, type PluginContext } from './link-stage.js';
import { listenerStage, type Listener } from './listener-stage.js';
import { VideoCheckGate } from './video.js';
import { viewsStage, type MatterViews, type Views } from './views-stage.js';
import { watchersStage, type Watchers } from './watchers-stage.js';

export type { PluginContext } from './link-stage.js';

export interface RunningPlugin {
  readonly files: Files;
  readonly link: Link;
  readonly listener: Listener;
  readonly views: Views;
  readonly watchers: Watchers;
}

/** Builds and starts every stage; undefined when Homebridge shut down before the start finished. */
export async function startPlugin(context: PluginContext): Promise<RunningPlugin | undefined> {
  // Read after each await: Homebridge may shut down while a stage is being built.
  const stopping = () => context.shutdown.stopping;
  if (!await claimStorage(context)) return undefined;
  const matterViews = await loadMatter(context);
  const files = await openFiles(context);
  if (stopping()) return undefined;
  const link = await linkStage(context, files);
  if (stopping()) return undefined;
  const listener = await listenerStage(context, files, link);
  if (stopping()) return undefined;
  const videoCheck = new VideoCheckGate();
  const views = viewsStage(context, link, listener, matterViews, videoCheck.opened);
  // From here HomeKit reads answer from the devices, no longer from the accessory cache.
  context.log.info(`Started: ${plural(listener.registry.lockIds().length, 'lock')} and ${plural(listener.registry.doorbellIds().length, 'doorbell')} served`);
  const watchers = await watchersStage(context, files, link, listener, views);
  // Every account's first setup is under way (or there is none): the ffmpeg check waits for them all.
  videoCheck.openAfter(watchers.runs.settled(), context.shutdown);
  return { files, link, listener, views, watchers };
}

/**
 * Takes the storage's instance lock, released when the plugin stops. False when another block's
 * process holds it: this block then opens no listener, sends nothing and publishes nothing.
 */
async function claimStorage({ api, log, shutdown }: PluginContext): Promise<boolean> {
  const storage = Storage.under(api.user.storagePath());
  const claim = await claimInstance(storage);
  if (claim.held) {
    shutdown.on('flush', () => claim.release());
    // Beside the start, never in its way: a failure here costs nothing but the files staying.
    void sweepLeftoverTempFiles(storage).then(
      (removed) => {
        if (removed.length > 0) log.info(`Removed ${removed.length === 1 ? 'a temporary file that an interrupted write' : `${String(removed.length)} temporary files that interrupted writes`} left in ${storage.dir}: ${removed.join(', ')}.`);
      },
      (error: unknown) => {
        log.debug(`Could not look for temporary files left by interrupted writes (${errorText(error)}).`);
      },
    );
    return true;
  }
  log.error(`Another Lock Access block already runs on this storage (${storage.dir}, process ${String(claim.pid)}), so this block does nothing: `
    + 'one block serves several accounts. Move this block\'s account into "accounts" of that block (Several homes or accounts in the README) and remove this block.');
  return false;
}

const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

/** Matter's code is loaded only on a bridge that runs Matter. */
async function loadMatter({ api, log }: PluginContext): Promise<MatterViews | undefined> {
  if (!matterOf(api)) {
    log.debug(MATTER_OFF_FOR_BRIDGE);
    return undefined;
  }
  const { matterView } = await import('../matter/matter-view.js');
  return matterView;
}
