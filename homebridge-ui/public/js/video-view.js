// @ts-check
// The Doorbell video card: whether video works and which ffmpeg the plugin uses, from the plugin's
// status file. (Its fields are data-field controls, written back by the account view's form wiring.)
import { $ } from './dom.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */

/** @param {UiStatus} status */
export function renderVideo(status) {
  const video = status.pluginRunning ? status.plugin?.video : undefined;
  /** @type {[string, string, string, string]} */
  let shown;
  if (video === undefined) shown = ['Unknown', 'bg-secondary', 'unknown', 'Start the plugin to see whether doorbell video works.'];
  else if (video.state === 'checking') shown = ['Checking', 'bg-secondary', 'checking', 'The plugin is checking ffmpeg.'];
  else if (video.state === 'ready') {
    const secure = video.secureVideo ? 'recordings also become HomeKit Secure Video clips' : 'HomeKit Secure Video is off';
    shown = ['Works', 'bg-success', 'ready', `Video works with ffmpeg ${video.ffmpegVersion ?? ''} (${video.ffmpegPath ?? 'ffmpeg'}, H.264 by ${video.h264Encoder ?? '?'}): the camera view plays a recording for ${String(video.replayMinutes)} minutes after it arrives; ${secure}.`];
  } else shown = ['Off', 'bg-warning text-dark', 'unavailable', `Video is off: ${video.problem ?? 'ffmpeg cannot be used'}. The camera shows the latest still picture. Install ffmpeg or set its path below, then restart Homebridge.`];
  const [words, colour, state, message] = shown;
  const badge = $('video-badge');
  badge.textContent = words;
  badge.className = `badge ${colour}`;
  badge.dataset.state = state;
  $('video-message').textContent = message;
}
