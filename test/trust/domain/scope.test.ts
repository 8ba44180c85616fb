import { describe, expect, it } from 'vitest';
import { intersectScopes, scopeAllows, scopeCoveredBy, validateScope, type DelegationScope } from '../../../subgraphs/trust/domain/index.js';

describe('delegation scopes', () => {
  it('normalizes: jurisdictions upper case, values sorted and deduplicated', () => {
    expect(validateScope({ jurisdictions: ['fr', 'DE', 'de'], capabilities: ['b', 'a'] })).toEqual({ jurisdictions: ['DE', 'FR'], capabilities: ['a', 'b'] });
  });

  it.each([[{ jurisdictions: [] }], [{ event_types: 'a' }], [{ colours: ['red'] }], [{ jurisdictions: ['Deutschland'] }], [[]]])('refuses %j', (scope) => {
    expect(typeof validateScope(scope)).toBe('string');
  });

  const DE_A: DelegationScope = { jurisdictions: ['DE'], event_types: ['a'] };
  const FR_A: DelegationScope = { jurisdictions: ['FR'], event_types: ['a'] };
  const FR_B: DelegationScope = { jurisdictions: ['FR'], event_types: ['b'] };

  it.each<[string, DelegationScope, DelegationScope[], boolean]>([
    ['anything under the unrestricted scope', { capabilities: ['x'] }, [{}], true],
    ['the unrestricted scope under a restricted one', {}, [DE_A], false],
    ['a narrower box', { jurisdictions: ['DE'], event_types: ['a'], capabilities: ['x'] }, [DE_A], true],
    ['a box needing two held boxes together', { jurisdictions: ['DE', 'FR'], event_types: ['a'] }, [DE_A, FR_A], true],
    ['a box that mixes combinations no held box grants', { jurisdictions: ['DE', 'FR'], event_types: ['a', 'b'] }, [DE_A, FR_B], false],
    ['an unrestricted dimension against one listed', { event_types: ['a'] }, [DE_A, FR_A], false],
    ['an unrestricted dimension covered by unrestricted and listed boxes', { event_types: ['a'] }, [{ event_types: ['a'] }, DE_A], true],
    ['anything when nothing is held', { jurisdictions: ['DE'] }, [], false],
  ])('%s', (_name, scope, held, expected) => {
    expect(scopeCoveredBy(scope, held)).toBe(expected);
  });

  it('intersects per dimension and reports an empty intersection', () => {
    expect(intersectScopes({ jurisdictions: ['DE', 'FR'] }, { jurisdictions: ['FR', 'IT'], capabilities: ['x'] })).toEqual({ jurisdictions: ['FR'], capabilities: ['x'] });
    expect(intersectScopes(DE_A, FR_A)).toBeUndefined();
    expect(intersectScopes({}, {})).toEqual({});
  });

  it('answers whether a scope grants one act', () => {
    expect(scopeAllows(DE_A, { jurisdiction: 'de', event_type: 'a', capability: 'anything' })).toBe(true);
    expect(scopeAllows(DE_A, { jurisdiction: 'FR' })).toBe(false);
    expect(scopeAllows({}, { event_type: 'z' })).toBe(true);
  });
});
