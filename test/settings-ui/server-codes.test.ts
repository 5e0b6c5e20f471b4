// The codes the plugin sends and en.json agree word for word: the English a log line, the status
// file or diagnostics carry (`text`) is the English page's sentence, one wording and not two.
import { describe, expect, it } from 'vitest';

import { LEGACY_MESSAGE_CODE, MESSAGE_CODE } from '../../src/util/ui-message.js';
import { readCatalog } from './catalogs.js';
import { serverTemplates } from './server-templates.js';

describe('message codes: each area\'s English templates are en.json\'s values', () => {
  it('every code is a catalog key whose en.json value is its template', async () => {
    const en = readCatalog('en');
    const templates = await serverTemplates();
    expect(templates.size).toBeGreaterThan(50);
    const differ = [...templates].filter(([code, template]) => JSON.stringify(en[code]) !== JSON.stringify(template)).map(([code]) => code);
    expect(differ).toEqual([]);
    expect([...templates.keys()].filter((code) => !MESSAGE_CODE.test(code))).toEqual([]);
  });

  it('the legacy code is in no catalog, so the page shows an older sentence as it was written', async () => {
    expect(readCatalog('en')[LEGACY_MESSAGE_CODE]).toBeUndefined();
    expect((await serverTemplates()).has(LEGACY_MESSAGE_CODE)).toBe(false);
  });
});
