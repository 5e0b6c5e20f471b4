// @ts-check
// The Doorbell video card: whether video works and which ffmpeg the plugin uses, from the plugin's
// status file. (Its fields are data-field controls, written back by the account view's form wiring.)
import { $ } from './dom.js';
import { t } from './i18n.js';
import { showMessage } from './messages.js';

/** @typedef {import('../../types/page.js').UiStatus} UiStatus */

/** @param {UiStatus} status */
export function renderVideo(status) {
  const video = status.pluginRunning ? status.plugin?.video : undefined;
  /** @type {[string, string, string, string]} */
  let shown;
  if (video === undefined) shown = [t('video.unknown'), 'bg-secondary', 'unknown', t('video.unknownMessage')];
  else if (video.state === 'checking') shown = [t('video.checking'), 'bg-secondary', 'checking', t('video.checkingMessage')];
  else if (video.state === 'ready') {
    const secure = t(video.secureVideo ? 'video.secureOn' : 'video.secureOff');
    shown = [t('video.works'), 'bg-success', 'ready', t('video.worksMessage', {
      version: video.ffmpegVersion ?? '', path: video.ffmpegPath ?? 'ffmpeg', encoder: video.h264Encoder ?? '?', count: video.replayMinutes, secure,
    })];
  } else shown = [t('video.off'), 'bg-warning text-dark', 'unavailable', t('video.offMessage', { problem: video.problem ? showMessage(video.problem) : t('video.ffmpegUnusable') })];
  const [words, colour, state, message] = shown;
  const badge = $('video-badge');
  badge.textContent = words;
  badge.className = `badge ${colour}`;
  badge.dataset.state = state;
  $('video-message').textContent = message;
}
