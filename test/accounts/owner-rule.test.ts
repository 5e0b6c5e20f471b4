import { describe, expect, it } from 'vitest';

import { ownerOf } from '../../src/accounts/owner-rule.js';

const all = () => true;

describe('the owner of a shared device', () => {
  it('is the account an entry names, while it is linked and holds the device', () => {
    expect(ownerOf({ holders: ['main', 'cabin'], named: ['cabin'], stored: 'main', linked: all })).toBe('cabin');
  });
  it('a named account that does not hold the device or is not linked is passed over', () => {
    expect(ownerOf({ holders: ['main', 'cabin'], named: ['beach'], stored: undefined, linked: all })).toBe('main');
    expect(ownerOf({ holders: ['main', 'cabin'], named: ['cabin'], stored: undefined, linked: (a) => a !== 'cabin' })).toBe('main');
  });
  it('else the owner kept in storage, while linked and holding', () => {
    expect(ownerOf({ holders: ['main', 'cabin'], named: [], stored: 'cabin', linked: all })).toBe('cabin');
    expect(ownerOf({ holders: ['main'], named: [], stored: 'cabin', linked: all })).toBe('main');
    expect(ownerOf({ holders: ['main', 'cabin'], named: [], stored: 'cabin', linked: (a) => a === 'main' })).toBe('main');
  });
  it('else the first holder in config order that is linked', () => {
    expect(ownerOf({ holders: ['cabin', 'beach'], named: [], stored: undefined, linked: all })).toBe('cabin');
    expect(ownerOf({ holders: ['cabin', 'beach'], named: [], stored: undefined, linked: (a) => a === 'beach' })).toBe('beach');
  });
  it('none when no holder is linked', () => {
    expect(ownerOf({ holders: ['cabin'], named: ['cabin'], stored: 'cabin', linked: () => false })).toBeUndefined();
  });
});
