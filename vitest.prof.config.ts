import { mergeConfig } from 'vitest/config';
import base from './vitest.config.js';
export default mergeConfig(base, { test: { experimental: { fsModuleCache: true } } });
