// vitest globalSetup of the `browser` lane: one Chromium for every browser test file of a run
// (launching one costs about two seconds), shared through a Playwright browser server. Each file
// connects with launchBrowser() (test/settings-ui/host.ts) and gets contexts of its own; closing a
// connected browser only disconnects. Nothing is launched where Chromium is missing: the files say
// why they skip.
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';

import { CHROMIUM, CHROMIUM_ARGS, browserTestsUnavailable } from '../settings-ui/host.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared Chromium's address, or '' when each file launches its own. */
    chromiumEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let server: BrowserServer | undefined;
  if (browserTestsUnavailable() === undefined) server = await chromium.launchServer({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  project.provide('chromiumEndpoint', server?.wsEndpoint() ?? '');
  return async () => {
    await server?.close();
  };
}
