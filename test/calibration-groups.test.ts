/** DTDR-G's calibration groups: a step's group and its key, as rank, fit and learning read them. */
import { describe, expect, it } from 'vitest';
import {
  groupKey,
  MANY_DEMONSTRATIONS,
  parseGroup,
  stepGroup,
  type CalibrationGroup,
} from '../src/core/retrieval/default/groups.js';

const ALL: CalibrationGroup[] = (['seen', 'new'] as const).flatMap((history) =>
  (['many', 'few', 'none'] as const).flatMap((support) =>
    (['high', 'low'] as const).map((level) => ({ history, support, level })),
  ),
);

describe('calibration groups', () => {
  it('a step falls in the group of its history, its top label’s demonstrations and its level', () => {
    expect(stepGroup(true, MANY_DEMONSTRATIONS, true)).toEqual({ history: 'seen', support: 'many', level: 'high' });
    expect(stepGroup(true, MANY_DEMONSTRATIONS - 0.5, false)).toEqual({
      history: 'seen',
      support: 'few',
      level: 'low',
    });
    expect(stepGroup(false, 1, true)).toEqual({ history: 'new', support: 'few', level: 'high' });
    expect(stepGroup(false, 0.5, false)).toEqual({ history: 'new', support: 'none', level: 'low' });
    expect(stepGroup(true, 0, true)).toEqual({ history: 'seen', support: 'none', level: 'high' });
  });

  it('every group has one key, `history/support/level`, read back by parseGroup', () => {
    const keys = ALL.map(groupKey);
    expect(new Set(keys).size).toBe(ALL.length);
    for (const [i, g] of ALL.entries()) {
      expect(keys[i]).toBe(`${g.history}/${g.support}/${g.level}`);
      expect(parseGroup(keys[i])).toEqual(g);
    }
    expect(parseGroup('tools-only')).toBeUndefined();
    expect(parseGroup('seen/many/high/extra')).toBeUndefined();
  });

  it('a group made anywhere has the key of the group a step falls in', () => {
    for (const known of [true, false])
      for (const count of [0, 1, MANY_DEMONSTRATIONS])
        for (const high of [true, false]) {
          const g = stepGroup(known, count, high);
          expect(groupKey({ ...g })).toBe(groupKey(g));
          // The groups steps share cannot be changed by one of them.
          expect(Object.isFrozen(g)).toBe(true);
        }
  });
});
